// One child's job description: what the parent tells a child to run (one config, in one role) and
// the settings the child needs, with nothing of the parent's command line. The parent writes it as
// a JSON file in the child's scratch directory and starts the child as `<exe> --job=<file>`; a
// config run by hand (`--experiment-config=... --model-config=...`) builds the same description
// from its command line (runner/child_job_options.hpp).
#pragma once

#include "core/experiment_config.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace benchmatrix {

/// timing: build the model, time its repeats, report the config's record. verifier: the --verify
/// child after a timing child, which reports a verification code (worker/verify_child.hpp).
/// compile_ahead: build the model and its backend's step (filling the compile cache), report a
/// record holding only the compile figures, time nothing (runner/compile_ahead.hpp).
enum class child_role { timing, verifier, compile_ahead };

/// "timing", "verifier" or "compile_ahead".
[[nodiscard]] const char* child_role_name(child_role role);

/// Exactly the experiment_runner settings a child reads (flag names in the comments).
struct child_settings {
  // Timing
  int repeat = 10;                          // --repeat: timed runs
  int iterations_per_run = 1;               // --iterations-per-run: model steps per timed run
  bool pure_wall_time = false;              // --pure-wall-time
  bool randomize_input = false;             // --randomize-input
  /// --paired-baseline: the backend ("eager" or a --dynamo value) the child times alternately
  /// with the config's own (worker/paired_timing.hpp); "" for an unpaired child (no flag, a
  /// config whose own backend is the baseline, or the verifier).
  std::string paired_baseline;
  bool collect_full_output = false;         // --collect-full-output
  std::optional<long long> batch_size;      // --batch-size; nullopt: YAML, then the model's default
  bool disable_tf32 = false;                // --disable-tf32
  std::optional<std::string> matmul_precision;  // --matmul-precision (only with --disable-tf32)
  // Backends
  std::string backend_library;  // --backend-library: absolute path; "" for none
  std::string cache_dir;        // --cache-dir: compiled artifacts by content hash
  std::string model_path;       // --model-path: absolute; the exported suite's programs, or ""
  std::string torchbench_checkout;  // the TorchBench checkout's absolute path; "" for built-in
  bool random_weights = false;      // --random-weights (checkout models)
  bool cold_start = false;      // --cold-start
  /// The CPUs the child (and the compile helper it starts) runs on, in cpulist form ("4-7"):
  /// --compile-ahead gives each of its parallel children a slice; "" inherits the parent's.
  std::string cpus;
  // Verification (the verifier child)
  int verify_iterations = 1;               // --verify-iterations: model steps per verifier run
  bool verify_deterministic = false;       // --verify-deterministic (worker/verify_child.hpp)
  std::optional<double> verify_tolerance;  // --verify-tolerance; nullopt: verifier/tolerance's rule
  bool verify_cosine_similarity = false;   // --verify-cosine-similarity
  // --metrics accuracy (worker/accuracy_metric.hpp)
  bool accuracy_metric = false;          // --metrics accuracy given
  nullable_string accuracy_baseline;     // --baseline, a --dynamo value; nullopt is eager
  std::optional<double> accuracy_rtol;   // --rtol; nullopt: torch.testing's default for the dtype
  std::optional<double> accuracy_atol;   // --atol
  // Profiling and dumps, after the timed repeats
  bool dump_pytorch_profiles = false;            // --dump-pytorch-profiles
  bool profile_cuda_cpu = false;                 // --profile-cuda-cpu
  bool profile_cuda_cpu_individual_ops = false;  // --profile-cuda-cpu-individual-ops
  bool profile_cupti = false;                    // --profile-cupti
  std::string save_ir_format;                    // --save-ir-format: "" or a format name
  bool dump_hlo = false;                         // --dump-hlo
  bool memory_pass = true;                       // not --no-memory-pass (worker/memory_pass.hpp)
  bool dump_memory_snapshot = false;             // --dump-memory-snapshot (CUDA configs)
  bool collect_dynamo_counters = false;          // --collect-dynamo-counters
  bool dump_dynamo_counters = false;             // --dump-dynamo-counters
  // Output
  std::string log_level = "info";                  // --log-level
  std::string output_dirname = "./output/";        // --output-dirname: files of --save-output, dumps
  std::string output_basename = "results.jsonl";   // --output-basename: a hand-run child appends here
  bool save_output = false;                        // --save-output
  std::string export_what;  // --export: "", "input", "output" or "both"
  std::string export_dir;   // --export-dir: absolute; "" without --export
};

struct child_job {
  child_role role = child_role::timing;
  std::string suite_name;
  std::string model_name;
  experiment_config experiment;
  double timestamp = 0;  // the sweep's --timestamp, seconds since the epoch (every child the same)
  /// The result channel: the file the child writes its one record (or verification result) to.
  /// "" for a child run by hand: a timing child then appends its record to the results file, a
  /// verifier prints its result.
  std::string result_path;
  child_settings settings;
};

/// The job as one JSON object: role, suite_name, model_name, experiment (the --experiment-config
/// object), timestamp, result_path and settings (one key per child_settings field, null for unset
/// optionals).
[[nodiscard]] std::string child_job_to_json(const child_job& job);

/// Parses child_job_to_json's text. Throws std::runtime_error naming `what`, the key and the type
/// expected ("job file /tmp/x: key 'settings.repeat': expected an integer") on a missing key or a
/// value of the wrong type, and on keys it does not know (a job from another version).
[[nodiscard]] child_job child_job_from_json(std::string_view text, std::string_view what);

/// Writes the job file (atomically); throws std::runtime_error naming the path on failure.
void write_child_job_file(const std::filesystem::path& path, const child_job& job);

/// Reads a job file written by write_child_job_file; throws std::runtime_error naming the path.
[[nodiscard]] child_job read_child_job_file(const std::filesystem::path& path);

/// The role of the job this process runs, set by experiment_runner's job entry (a child, exec'd
/// or forked from the sweep, or a config run by hand: timing); nullopt before (a sweep's parent).
/// What code inside a model or backend asks to tell the verifier child from the timing child.
[[nodiscard]] std::optional<child_role> running_child_role();
void set_running_child_role(child_role role);

}  // namespace benchmatrix
