// Every experiment_runner flag, typed, with the defaults of the PyTorch/XLA runner
// (shared/reference/xla_runner.md §1). runner/runner_cli.hpp builds it from the command line, with a
// matrix preset (YAML) supplying the flags the command line leaves out.
#pragma once

#include "core/experiment_config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

struct runner_options {
  // Model selection (§1.1)
  // --suite-name: one suite, or a comma-separated list run in one sweep (in the order given, each
  // named once). A repeated --suite-name replaces the earlier value, as argparse's store does.
  std::vector<std::string> suite_names;
  std::vector<std::string> filter;   // regexes, any match includes; tiers already expanded
  std::vector<std::string> exclude;  // regexes, any match excludes
  int total_partitions = 1;          // 1..9
  int partition_id = 0;
  bool no_skip = false;
  // Experiment axes (§1.2); empty means "the matrix default"
  std::vector<std::string> accelerator;
  std::vector<nullable_string> xla;
  std::vector<nullable_string> dynamo;
  std::vector<std::string> test;
  std::vector<nullable_string> xla_flags;
  std::vector<std::string> torch_xla2;
  std::vector<std::string> precision;      // --precision (core/precision_axes.hpp); empty: auto
  std::vector<std::string> inductor_mode;  // --inductor-mode, inductor configs only; empty: default
  bool enable_functionalization = false;
  bool keep_model_data_on_cuda = false;
  std::optional<long long> batch_size;
  // Timing (§1.3)
  int repeat = 10;              // timed runs per experiment
  int iterations_per_run = 1;   // model steps per timed run
  bool pure_wall_time = false;
  bool randomize_input = false;
  // --paired-baseline (backends/paired_baseline.hpp): "" for none, else "eager" or a --dynamo value
  // each timing child runs alternately with the config's own backend, repeat by repeat.
  std::string paired_baseline;
  bool collect_full_output = false;
  bool disable_tf32 = false;
  std::optional<std::string> matmul_precision;
  // A kernel library (ops/kernel_library.hpp) whose aten overrides the backend's steps run with:
  // loaded after the model is built, and in the verifier after the eager and float64 references.
  std::string backend_library;  // absolute path; "" for none
  // Compiled backends
  std::string model_path;   // --model-path (absolute): the exported suite's programs, or ""
  /// --torchbench-dir as given ("" when absent: the environment variable, then the search);
  /// main resolves it (find_torchbench_checkout) to torchbench_checkout.
  std::string torchbench_dir;
  std::string torchbench_checkout;  // absolute; "" runs the built-in torchbench models
  bool random_weights = false;      // --random-weights
  std::string cache_dir;    // compiled artifacts by content hash; default <output_dirname>/compile_cache
  bool cold_start = false;  // compile afresh and replace the cached entry
  // --compile-ahead: compile-only children at once before the timed sweep (runner/compile_ahead);
  // 0: off, each child compiles when it runs (the original's behaviour).
  int compile_ahead = 0;
  // --no-compile-service: each Python helper (compile, export, import) is a process of its own,
  // paying torch's import; by default they run in the sweep's compile service
  // (runner/compile_service.hpp), which imports torch once.
  bool no_compile_service = false;
  // Verification (§1.4, §6)
  bool verify = false;                    // a verifier child after each timing child
  int verify_iterations = 1;              // model steps per verifier run
  bool verify_deterministic = false;      // the verifier in PyTorch's deterministic mode
  std::optional<double> verify_tolerance;  // nullopt: per test, device and model (verifier/tolerance)
  bool verify_cosine_similarity = false;  // cosine similarity for every model
  // --metrics accuracy: the timing child compares each config's eval outputs with the baseline
  // backend's (worker/accuracy_metric.hpp) with assert_close semantics (verifier/assert_close.hpp).
  std::vector<std::string> metrics;      // extra metrics: "accuracy"
  nullable_string accuracy_baseline;     // --baseline, a --dynamo value; nullopt is eager
  std::optional<double> accuracy_rtol;   // nullopt: torch.testing's default for the dtype
  std::optional<double> accuracy_atol;
  // Profiling (§1.6, worker/profile_pass.hpp): passes after the timed repeats, never inside them.
  bool dump_pytorch_profiles = false;  // Kineto trace + key-averages table per repeat
  bool profile_cuda_cpu = false;       // CPU/CUDA time per repeat (+ CUPTI kernel figures on CUDA)
  bool profile_cuda_cpu_individual_ops = false;  // per aten op times
  bool profile_cupti = false;          // our CUPTI collector: kernel count, time, busy time, top
  std::string save_ir_format;          // --save-ir-format: "" or "text" (the traced graph)
  bool dump_hlo = false;               // AOTInductor's generated sources (profiler/ir_dump.hpp)
  // Peak memory (worker/memory_pass.hpp): a pass after the timed repeats; --no-memory-pass skips
  // it.
  bool memory_pass = true;
  // The CUDA caching allocator's history per config (torch_support/cuda_memory_history.hpp).
  bool dump_memory_snapshot = false;
  bool collect_dynamo_counters = false;  // our backends' counters (backends/backend_counters.hpp)
  bool dump_dynamo_counters = false;     // the same per repeat, as files
  // Process control and output (§1.5)
  bool dry_run = false;
  bool print_subprocess = false;
  int subprocess_timeout = 1800;  // seconds of wall clock per child
  double subprocess_grace_period = 5.0;  // seconds between SIGTERM and SIGKILL on timeout/Ctrl-C
  bool progress_bar = false;
  std::string log_level = "info";
  std::string output_dirname = "./output/";
  std::string output_basename = "results.jsonl";
  bool no_resume = false;
  bool retry_failed = false;
  std::vector<std::string> rerun;  // --rerun MODEL[:BACKEND[:TEST]] (runner/rerun_selection.hpp)
  bool save_output = false;
  // Numerics export: each config's tensors of its first timed repeat as .npy plus manifest.json
  // under <export_dir>/<config name>/ (worker/numerics_export.hpp). Both empty: no export.
  std::string export_what;  // "input", "output" or "both"
  std::string export_dir;
  double timestamp = 0;  // seconds since the epoch; the parent's goes into its children's jobs
  // Scale-out on one host (runner/device_slots.hpp): one child per listed GPU at a time.
  std::string devices;         // --devices: "" (one child at a time, unpinned), "all", or "0,1,..."
  bool exclusive = false;      // --exclusive: one child on the host at a time, whatever --devices says
  std::string expected_times;  // --expected-times: an earlier results file; longest configs start first
  // Scale-out over hosts (runner/slurm_submission.hpp): the sweep as a Slurm job array.
  bool slurm = false;
  std::optional<int> slurm_tasks;            // array tasks = model partitions; default min(9, models)
  std::string slurm_partition;               // "" leaves the cluster's default partition
  std::optional<int> slurm_gpus_per_task;    // default 1 with --accelerator=cuda, else none
  std::string slurm_time;                    // sbatch --time of each task; "" is the partition's limit
  std::vector<std::string> slurm_sbatch_args;  // extra "#SBATCH" options, e.g. --account=A
  bool slurm_wait = false;   // wait for the merge job, then print the summary table
  bool slurm_task = false;   // internal: this process is one array task (runs its partition)
  bool slurm_merge = false;  // internal: this process is the merge job
  // One config run by hand (the `Run with ...` line's flags): runs it as a sweep's child would
  // (runner/child_job_options.hpp) and appends its record to the results file.
  std::optional<std::string> experiment_config;  // the experiment as JSON
  std::optional<std::string> model_config;       // the model as JSON
  std::optional<std::string> matrix;             // the preset that supplied defaults, if any
  // internal: --job=<file>, a sweep's child (core/child_job.hpp); it is then the only flag given
  std::optional<std::string> job_file;

  [[nodiscard]] bool runs_one_config_by_hand() const { return experiment_config || model_config; }
  /// suite_names as --suite-name takes them: "torchbench", "torchbench,huggingface".
  [[nodiscard]] std::string suite_name_list() const {
    std::string list;
    for (const auto& name : suite_names) list += (list.empty() ? "" : ",") + name;
    return list;
  }
};

}  // namespace benchmatrix
