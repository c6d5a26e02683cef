#include "runner/runner_cli.hpp"

#include "backends/backend_registry.hpp"
#include "backends/paired_baseline.hpp"
#include "core/directory_tree.hpp"
#include "core/precision_axes.hpp"
#include "runner/rerun_selection.hpp"
#include "suites/tiers.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace benchmatrix {

std::vector<flag_spec> runner_flag_specs(const std::vector<std::string>& suites) {
  using a = flag_action;
  using t = flag_type;
  const std::vector<std::string> dynamo_choices = benchmatrix::dynamo_choices();
  std::string dynamo_default = "None";  // the help's default: the axis without --dynamo
  for (const auto& value : default_dynamo_axis())
    if (value) dynamo_default += ", " + *value;
  // --baseline: a --dynamo value, or "eager" (what records and the issue call None).
  std::vector<std::string> baseline_choices = dynamo_choices;
  baseline_choices.push_back("eager");
  std::string suite_choices;  // the choices of each listed name (checked by parse_suite_names)
  for (const auto& suite : suites) suite_choices += (suite_choices.empty() ? "" : ", ") + suite;
  return {
      // Model selection
      {"suite-name", 0, a::store, t::text, {}, false, "", "Suite of models to run, or a comma-separated list of suites run in one sweep (each record names its suite): " + suite_choices + " (required, or from --matrix; given twice, the last wins)."},
      {"model-path", 0, a::store, t::text, {}, false, "", "--suite-name=exported: your own TorchScript program FILE.pt (example inputs in FILE.inputs.pt, a torch.save'd tuple of tensors), a directory of such pairs, or a directory holding model.pt and inputs.pt."},
      {"torchbench-dir", 0, a::store, t::text, {}, false, "searched", "--suite-name=torchbench: the TorchBench checkout whose models run (the folder of a pytorch/benchmark clone, holding torchbenchmark/); none runs the built-in C++ models. Default: $BENCHMATRIX_TORCHBENCH_DIR, else the first torchbenchmark/, torchbench/ or benchmark/ in ./, ../, ../../ or ../../../, else the built-in models."},
      {"random-weights", 0, a::store_true, t::text, {}, false, "", "TorchBench checkout models: build torchvision and timm models with randomly initialised weights instead of downloading pretrained ones (recorded in model_source.weights)."},
      {"filter", 'k', a::append, t::text, {}, false, "", "Run models whose name matches this case-insensitive regex."},
      {"exclude", 'x', a::append, t::text, {}, false, "", "Skip models whose name matches this case-insensitive regex."},
      {"filter-by-tier", 0, a::append, t::integer, {}, false, "", "Add TorchBench tier 1, 2 or 3 to --filter."},
      {"exclude-by-tier", 0, a::append, t::integer, {}, false, "", "Add TorchBench tier 1, 2 or 3 to --exclude."},
      {"total-partitions", 0, a::store, t::integer, {"1", "2", "3", "4", "5", "6", "7", "8", "9"}, false, "1", "Split the model list into this many contiguous partitions."},
      {"partition-id", 0, a::store, t::integer, {}, false, "0", "Which partition to run (0-based)."},
      {"no-skip", 0, a::store_true, t::text, {}, false, "", "Ignore the skip lists of configs/torchbench.yaml."},
      // Experiment axes
      {"accelerator", 0, a::append, t::text, {"cpu", "cuda", "tpu"}, false, "cpu, cuda, tpu", "Accelerator axis."},
      {"xla", 0, a::append, t::text, {"None", "PJRT", "XRT"}, true, "None, PJRT, XRT", "XLA runtime axis; None is no XLA."},
      {"dynamo", 0, a::append, t::text, dynamo_choices, true, dynamo_default, "Compiler backend axis; None is eager. inductor runs AOTInductor; torchscript and cudagraphs are benchmatrix's."},
      {"test", 0, a::append, t::text, {"eval", "train"}, false, "eval, train", "Test axis: inference or a training step."},
      {"xla-flags", 0, a::append, t::text, {}, true, "None", "XLA_FLAGS axis; each distinct string is one value."},
      {"torch-xla2", 0, a::append, t::text, {"extract_jax", "torch_export"}, false, "", "torch_xla2 (JAX) axis: torch_export with --xla=PJRT runs openxla's export (torch.export -> torchax -> StableHLO -> PJRT); extract_jax, and xla=None, are SKIP records with the reason."},
      {"precision", 0, a::append, t::text, precision_choices(), false, "auto", "Precision axis: auto (the suite's rule: inference cast to bfloat16, CUDA training under float16 autocast, the YAML's force_amp/force_fp16 models), float32, bfloat16, float16 (module and floating inputs cast), amp (float16 autocast), amp_bf16 (bfloat16 autocast). Records name a value other than auto in experiment.precision; --verify uses that precision's tolerance."},
      {"inductor-mode", 0, a::append, t::text, inductor_mode_choices(), false, "default", "Inductor mode axis, for --dynamo=inductor configs only (others run once): default (AOTInductor's defaults) or max-autotune (max_autotune and coordinate_descent_tuning, as torch.compile's mode sets them). Each mode compiles into its own cache entry; records name a mode other than default in experiment.inductor_mode."},
      {"enable-functionalization", 0, a::store_true, t::text, {}, false, "", "Functionalization axis value True (else False)."},
      {"keep-model-data-on-cuda", 0, a::store_true, t::text, {}, false, "", "Keep model data on CUDA (openxla only)."},
      {"batch-size", 0, a::store, t::integer, {}, true, "model default", "Batch size, where the model allows changing it."},
      // Timing
      {"repeat", 0, a::store, t::integer, {}, false, "10", "Timed runs per experiment; one metric value each."},
      {"iterations-per-run", 0, a::store, t::integer, {}, false, "1", "Model steps per timed run."},
      {"pure-wall-time", 0, a::store_true, t::text, {}, false, "", "Time each step with CUDA events (minimum of adaptive repeats, L2 flushed); CUDA only."},
      {"paired-baseline", 0, a::store, t::text, paired_baseline_choices(), false, "", "Paired measurement: each timing child also builds this backend's step on the same model and runs it and the config's own alternately, repeat by repeat (ABBA order), on identical inputs; the record adds metrics baseline_total_time and baseline_per_iter_time and a top-level 'paired' with the per-pair speedups and their median with a bootstrap 95% interval. Configs whose own backend is the baseline run unpaired. Works with openxla configs and --pure-wall-time (both steps timed that way); profiling, --metrics accuracy and --verify's child see only the config's own backend."},
      {"randomize-input", 0, a::store_true, t::text, {}, false, "", "Fill floating inputs with randn before every step."},
      {"collect-full-output", 0, a::store_true, t::text, {}, false, "", "Train steps return prediction, loss, gradients, the updated parameters and the buffers (perturbs timing)."},
      {"filter-by-single-graph", 0, a::store_true, t::text, {}, false, "", "Accepted for compatibility (torch.compile fullgraph=True in the original); changes nothing here: every compiled backend already captures the whole step as one graph or fails with an error record, never splitting it."},
      {"disable-tf32", 0, a::store_true, t::text, {}, false, "", "Do not force TF32 (high) float32 matmul precision."},
      {"matmul-precision", 0, a::store, t::text, {"default", "high", "highest"}, true, "None", "float32 matmul precision; applies only with --disable-tf32, as in the original."},
      // Verification (§1.4, §6)
      {"backend-library", 0, a::store, t::text, {}, false, "", "A shared library registering aten overrides (TORCH_LIBRARY_IMPL), loaded in each child after the model is built; with --verify the references run without it and the backend run with it."},
      // Compiled backends
      {"cache-dir", 0, a::store, t::text, {}, false, "<output-dirname>/compile_cache", "Directory of compiled artifacts (AOTInductor packages), keyed by a content hash and shared by runs."},
      {"cold-start", 0, a::store_true, t::text, {}, false, "", "Compile afresh, ignoring (and replacing) cached artifacts, as PyTorch's --cold-start-latency."},
      {"compile-ahead", 0, a::store, t::integer, {}, false, "0", "Before the timed sweep, compile what the sweep's configs will load (AOTInductor packages, XLA executables) into --cache-dir with N compile-only children at once, each on its own share of this process's CPUs; the timed children then load it (their records' compile.ahead holds the compile's figures). 0: each child compiles when it runs."},
      {"no-compile-service", 0, a::store_true, t::text, {}, false, "", "Run each Python helper (the inductor and openxla compiles, the huggingface/timm_models import) as a process of its own that imports torch, instead of in the sweep's compile service, which imports torch once and forks a process per helper."},
      {"verify", 0, a::store_true, t::text, {}, false, "", "After each config's timing child, a verifier child checks its accuracy against eager and float64 (PASS, FAIL, ...)."},
      {"verify-iterations", 0, a::store, t::integer, {}, false, "1", "Model steps in each verifier run."},
      {"verify-tolerance", 0, a::store, t::real, {}, true, "per test, device and model", "Tolerance of the accuracy check. Unset, it follows the test, device, precision and the suite YAML's tolerance lists: 1e-2 eval, 8e-2 for float16 tolerance.even_higher models; train 1e-3 on CUDA, 8e-2 for tolerance.even_higher models, 1e-4 elsewhere."},
      {"verify-deterministic", 0, a::store_true, t::text, {}, false, "", "In the verifier child, PyTorch's deterministic algorithms (strict, as its accuracy harness: an op without a deterministic kernel raises, EAGER_FAILED; warn-only for the models that harness exempts by name, alexnet and vgg16 among them), cuDNN deterministic and CUBLAS_WORKSPACE_CONFIG=:4096:8, as PyTorch's accuracy harness sets them; the XLA runner's verifier does not, so without it an atomics-based kernel (CUDA's embedding backward) makes two eager runs differ: NONDETERMINISTIC_EAGER_RUN."},
      {"verify-cosine-similarity", 0, a::store_true, t::text, {}, false, "", "Accuracy check by cosine similarity (>= 0.99) for every model, as tolerance.cosine models get."},
      {"metrics", 0, a::append, t::text, {"accuracy"}, false, "", "Extra metrics per config; accuracy: compare the config's eval outputs with --baseline's on the same inputs (torch.testing.assert_close semantics), after the timed repeats."},
      {"baseline", 0, a::store, t::text, baseline_choices, true, "None", "Backend whose outputs --metrics accuracy compares against: a --dynamo value (openxla runs with xla=PJRT), or eager, the same as None (plain eager)."},
      {"rtol", 0, a::store, t::real, {}, false, "per dtype", "Relative tolerance of --metrics accuracy (default: torch.testing's for the dtype); overrides only the relative one."},
      {"atol", 0, a::store, t::real, {}, false, "per dtype", "Absolute tolerance of --metrics accuracy (default: torch.testing's for the dtype); overrides only the absolute one."},
      // Profiling: separate passes after the timed repeats
      {"dump-pytorch-profiles", 0, a::store_true, t::text, {}, false, "", "Per repeat of a profiling pass: <out>/<model>/<r>/trace-<basename>.json (Chrome/Perfetto trace) and pytorch-profile-<basename>.txt (key-averages table), tables concatenated in <out>/<model>/pytorch-profile-<basename>.txt."},
      {"profile-cuda-cpu", 0, a::store_true, t::text, {}, false, "", "Record total_cpu_time_s, total_cuda_time_s and per-iteration values per repeat of a profiling pass; on CUDA also the CUPTI kernel figures (--profile-cupti)."},
      {"profile-cuda-cpu-individual-ops", 0, a::store_true, t::text, {}, false, "", "Record per aten op self/total CPU and CUDA time and calls under metrics.inductor_ops (inductor) or metrics.<backend>_ops."},
      {"profile-cupti", 0, a::store_true, t::text, {}, false, "", "CUDA: our CUPTI collector's kernel count, kernel time, busy (merged-interval) time per repeat and top kernels, in a pass of its own."},
      {"save-ir-format", 0, a::store, t::text, {"text", "hlo", "stablehlo"}, false, "", "Save the IR in <out>/<model>/dump-<basename>.<format>: text is the traced TorchScript graph (torchscript, inductor) or the StableHLO module (openxla); stablehlo is openxla's module; hlo is the HLO module XLA compiled, before its optimisations (openxla: taken from XLA's dumps, which then also stay in <out>/<model>/hlo-<basename>/)."},
      {"dump-hlo", 0, a::store_true, t::text, {}, false, "", "Into <out>/<model>/hlo-<basename>/: inductor: AOTInductor's generated sources (wrapper and kernel .cpp, metadata); openxla: XLA's HLO dumps (the parent adds --xla_dump_to=<that directory> to the child's XLA_FLAGS)."},
      {"no-memory-pass", 0, a::store_true, t::text, {}, false, "", "Skip the memory pass (on by default: after the timed repeats, --repeat more runs of --iterations-per-run steps that record peak_device_allocated_bytes, peak_device_reserved_bytes (CUDA) and peak_host_rss_bytes per repeat, and the model's footprint as the record's memory key). The timed repeats are the same either way; the flag saves the pass's wall time."},
      {"dump-memory-snapshot", 0, a::store_true, t::text, {}, false, "", "CUDA: record the CUDA caching allocator's history (every allocation and free of the model's preparation, warm-up, CUDA graph capture and timed repeats) and write it to <out>/<model>/memory-snapshot-<basename>.pickle, the format of torch.cuda.memory._dump_snapshot (open it at https://pytorch.org/memory_viz). CUDA configs only; a sweep with none is a usage error."},
      {"collect-dynamo-counters", 0, a::store_true, t::text, {}, false, "", "Record our backend's counters (graphs, calls through them, compile cache, CUDA graph captures, eager fallbacks) as metrics.dynamo_counters."},
      {"dump-dynamo-counters", 0, a::store_true, t::text, {}, false, "", "Write each repeat's counters to <out>/<model>/<r>/dynamo-counters-<basename>.txt (JSON)."},
      // Process control and output
      {"dry-run", 0, a::store_true, t::text, {}, false, "", "List the configs and run nothing."},
      {"print-subprocess", 0, a::store_true, t::text, {}, false, "", "Forward each child's stdout/stderr after it finishes."},
      {"subprocess-timeout", 0, a::store, t::integer, {}, false, "1800", "Seconds of wall clock per child before it is stopped."},
      {"subprocess-grace-period", 0, a::store, t::real, {}, false, "5", "Seconds between SIGTERM and SIGKILL when a child is stopped."},
      {"progress-bar", 0, a::store_true, t::text, {}, false, "", "Show the live progress line even when stderr is not a terminal."},
      {"log-level", 0, a::store, t::text, {"critical", "error", "warning", "info", "debug"}, false, "info", "Logging threshold (LEVEL:logger:message on stderr)."},
      {"output-dirname", 0, a::store, t::text, {}, false, "./output/", "Directory of the results file (created if missing)."},
      {"output-basename", 0, a::store, t::text, {}, false, "results.jsonl", "Results file name inside the output directory."},
      {"no-resume", 0, a::store_true, t::text, {}, false, "", "Delete an existing results file instead of resuming it."},
      {"retry-failed", 0, a::store_true, t::text, {}, false, "", "On resume, run again configs whose record is an error (SKIP records stay done)."},
      {"rerun", 0, a::append, t::text, {}, false, "", "MODEL[:BACKEND[:TEST]]: run this config of the matrix again although the results file has its record; the old record moves to <results>.retried, as --retry-failed moves failed ones. BACKEND as reports name it (eager, inductor, torchscript, ...); empty or * matches any."},
      {"save-output", 0, a::store_true, t::text, {}, false, "", "torch.save each repeat's output to <out>/<model>/<r>/output-<basename>.pt."},
      {"export", 0, a::store, t::text, {"input", "output", "both"}, false, "", "Write each config's example inputs and/or first-timed-repeat outputs as .npy files plus manifest.json under --export-dir/<config>/ (compare with numeric_check)."},
      {"export-dir", 0, a::store, t::text, {}, false, "", "Directory of --export (created if missing); required with --export."},
      {"timestamp", 0, a::store, t::real, {}, false, "now", "Sweep timestamp stored in every record (seconds since the epoch)."},
      // Scale-out
      {"devices", 0, a::store, t::text, {}, false, "", "GPUs to spread the sweep over, one child per GPU at a time: comma-separated indices (nvidia-smi numbering) or all. Each child sees only its GPU (CUDA_VISIBLE_DEVICES); records gain a placement object. Default: one child at a time, unpinned."},
      {"exclusive", 0, a::store_true, t::text, {}, false, "", "With --devices: one child on the host at a time, on the first listed GPU (timing-critical runs; records still carry their placement)."},
      {"expected-times", 0, a::store, t::text, {}, false, "", "An earlier results file: configs it timed start longest first (unknown ones before them), which shortens a concurrent sweep."},
      {"slurm", 0, a::store_true, t::text, {}, false, "", "Submit the sweep as a Slurm job array (one model partition per task, results under <output-dirname>/slurm/) plus a dependent job merging them into <output-dirname>/<output-basename>; a rerun submits only the tasks with configs lacking a record. With --dry-run: print the sbatch scripts."},
      {"slurm-tasks", 0, a::store, t::integer, {}, false, "min(9, models)", "Array tasks (model partitions, 1..9 as --total-partitions)."},
      {"slurm-partition", 0, a::store, t::text, {}, false, "cluster default", "sbatch --partition of every job."},
      {"slurm-gpus-per-task", 0, a::store, t::integer, {}, false, "1 with cuda, else 0", "sbatch --gpus-per-task of each array task."},
      {"slurm-time", 0, a::store, t::text, {}, false, "partition limit", "sbatch --time of each array task (e.g. 2:00:00)."},
      {"slurm-sbatch-arg", 0, a::append, t::text, {}, false, "", "Another sbatch option for every job, e.g. --slurm-sbatch-arg=--account=A."},
      {"slurm-wait", 0, a::store_true, t::text, {}, false, "", "Wait for the merge job, then print the summary table; exit 1 if the merge failed."},
      {"slurm-task", 0, a::store_true, t::text, {}, false, "", "Internal: run as one task of a --slurm array."},
      {"slurm-merge", 0, a::store_true, t::text, {}, false, "", "Internal: merge the tasks' results of a --slurm sweep (what the dependent job runs; safe to run by hand)."},
      {"experiment-config", 0, a::store, t::text, {}, false, "", "Run one config by hand (with --model-config; the 'Run with' log line gives both): the experiment config as JSON."},
      {"model-config", 0, a::store, t::text, {}, false, "", "Run one config by hand (with --experiment-config): the model config as JSON."},
      {"job", 0, a::store, t::text, {}, false, "", "Internal: run as a sweep's child, on the job file the parent wrote (the only flag then)."},
      {"matrix", 0, a::store, t::text, {}, false, "", "Matrix preset: a name in configs/matrices/ or a YAML path; command-line flags override it."},
  };
}

namespace {

const flag_spec* find_spec(const std::vector<flag_spec>& specs, const std::string& name) {
  for (const auto& spec : specs)
    if (spec.name == name) return &spec;
  return nullptr;
}

std::filesystem::path preset_path(const std::string& matrix, const std::string& config_dir) {
  const bool is_path = matrix.find('/') != std::string::npos ||
                       std::filesystem::path(matrix).extension() == ".yaml";
  if (is_path) return matrix;
  return std::filesystem::path(config_dir) / "matrices" / (matrix + ".yaml");
}

std::string scalar_text(const YAML::Node& node) {
  if (node.IsNull()) return "None";
  return node.Scalar();
}

/// Adds the preset's values for every flag the command line did not give.
void apply_preset(parsed_flags& flags, const std::vector<flag_spec>& specs,
                  const std::vector<std::string>& suites, const std::string& matrix,
                  const std::string& config_dir) {
  const auto path = preset_path(matrix, config_dir);
  if (!std::filesystem::is_regular_file(path)) {
    std::string known;
    const auto dir = std::filesystem::path(config_dir) / "matrices";
    for (const auto& name : directory_entries(dir.string()))
      if (std::filesystem::path(name).extension() == ".yaml")
        known += (known.empty() ? "" : ", ") + std::filesystem::path(name).stem().string();
    throw usage_error("argument --matrix: no preset file " + path.string() +
                      (known.empty() ? "" : " (presets: " + known + ")"));
  }
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    throw usage_error("argument --matrix: " + path.string() + ": " + e.what());
  }
  if (!root.IsMap())
    throw usage_error("argument --matrix: " + path.string() +
                      ": expected a mapping of flag names to values");
  for (const auto& entry : root) {
    std::string key = entry.first.as<std::string>();
    std::replace(key.begin(), key.end(), '_', '-');
    const flag_spec* spec = find_spec(specs, key);
    const std::string where = "argument --matrix: " + path.string() + ": key '" + key + "'";
    if (!spec || key == "matrix" || key == "experiment-config" || key == "model-config" ||
        key == "timestamp" || key == "slurm-task" || key == "slurm-merge" || key == "job")
      throw usage_error(where + " is not a flag a preset can set");
    if (flags.given(key)) continue;  // the command line wins
    const YAML::Node& value = entry.second;
    std::vector<std::string> texts;
    if (value.IsSequence() && key == "suite-name") {
      // A list of suites is --suite-name's comma-separated value, as the axes' lists are theirs.
      std::string joined;
      for (const auto& item : value) joined += (joined.empty() ? "" : ",") + scalar_text(item);
      texts.push_back(joined);
    } else if (value.IsSequence()) {
      if (spec->action != flag_action::append)
        throw usage_error(where + ": expected one value, got a list");
      for (const auto& item : value) texts.push_back(scalar_text(item));
    } else if (value.IsScalar() || value.IsNull()) {
      texts.push_back(scalar_text(value));
    } else {
      throw usage_error(where + ": expected a value or a list of values");
    }
    for (const auto& text : texts) {
      if (spec->action == flag_action::store_true) {
        if (text == "true" || text == "True") flags.add(key, std::string());
        else if (text != "false" && text != "False")
          throw usage_error(where + ": expected true or false, got '" + text + "'");
        continue;
      }
      try {
        if (key == "suite-name") (void)parse_suite_names(text, suites);
        flags.add(key, check_flag_value(*spec, text));
      } catch (const usage_error& e) {
        throw usage_error(where + ": " + e.what());
      }
    }
  }
}


/// "'a', 'b'": argparse's way of listing choices.
std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "'" : ", '") + name + "'";
  return out;
}

long long integer_or(const parsed_flags& flags, const std::string& name, long long fallback) {
  const auto v = flags.last(name);
  return v && *v ? std::stoll(**v) : fallback;
}


/// --devices, --exclusive, --expected-times and the --slurm flags, with their consistency rules.
void parse_scale_out(const parsed_flags& flags, runner_options& o) {
  o.devices = flags.text_or("devices", "");
  o.exclusive = flags.given("exclusive");
  if (o.exclusive && o.devices.empty())
    throw usage_error("argument --exclusive: only with --devices (without it one child runs at a time)");
  o.expected_times = flags.text_or("expected-times", "");
  o.slurm = flags.given("slurm");
  o.slurm_task = flags.given("slurm-task");
  o.slurm_merge = flags.given("slurm-merge");
  if (const auto v = flags.last("slurm-tasks"); v && *v) {
    o.slurm_tasks = static_cast<int>(std::stoll(**v));
    if (*o.slurm_tasks < 1 || *o.slurm_tasks > 9)
      throw usage_error("argument --slurm-tasks: must be in 1..9 (the choices of --total-partitions), got " + **v);
  }
  o.slurm_partition = flags.text_or("slurm-partition", "");
  if (const auto v = flags.last("slurm-gpus-per-task"); v && *v) {
    o.slurm_gpus_per_task = static_cast<int>(std::stoll(**v));
    if (*o.slurm_gpus_per_task < 0)
      throw usage_error("argument --slurm-gpus-per-task: must not be negative, got " + **v);
  }
  o.slurm_time = flags.text_or("slurm-time", "");
  o.slurm_sbatch_args = flags.texts("slurm-sbatch-arg");
  o.slurm_wait = flags.given("slurm-wait");
  if (!o.slurm) {
    for (const char* name : {"slurm-tasks", "slurm-partition", "slurm-gpus-per-task", "slurm-time",
                             "slurm-sbatch-arg", "slurm-wait", "slurm-task", "slurm-merge"})
      if (flags.given(name)) throw usage_error(std::string("argument --") + name + ": only with --slurm");
  } else if (!o.slurm_task) {
    // The submission sets the partitions of its tasks itself.
    for (const char* name : {"total-partitions", "partition-id"})
      if (flags.given(name))
        throw usage_error(std::string("argument --") + name +
                          ": --slurm partitions the models itself; choose the number of tasks with --slurm-tasks");
  }
  if (o.slurm_task && o.slurm_merge)
    throw usage_error("--slurm-task and --slurm-merge are two different jobs of a --slurm sweep");
}

}  // namespace

std::vector<std::string> parse_suite_names(const std::string& text,
                                           const std::vector<std::string>& suites) {
  std::vector<std::string> names;
  std::string::size_type start = 0;
  const bool listed = text.find(',') != std::string::npos;
  const std::string in_list = listed ? " in '" + text + "'" : "";
  while (true) {
    const auto comma = text.find(',', start);
    const auto name = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (std::find(suites.begin(), suites.end(), name) == suites.end())
      throw usage_error("argument --suite-name: " +
                        (name.empty() && listed ? std::string("empty suite name")
                                                : "invalid choice: '" + name + "'") +
                        in_list + " (choose from " + quoted_list(suites) +
                        (listed ? ", or a comma-separated list of them)" : ")"));
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw usage_error("argument --suite-name: '" + name + "' is listed twice" + in_list +
                        " (name each suite once)");
    names.push_back(name);
    if (comma == std::string::npos) return names;
    start = comma + 1;
  }
}

runner_options parse_runner_options(const std::vector<std::string>& arguments,
                                    const std::vector<std::string>& suites,
                                    const std::string& config_dir) {
  const auto specs = runner_flag_specs(suites);
  parsed_flags flags = parse_flags(specs, arguments);
  runner_options o;
  if (flags.given("job")) {
    // Everything a child needs is in its job file: another flag would be silently ignored.
    if (flags.values().size() != 1)
      throw usage_error("argument --job: a sweep's child takes no other flag (its job file holds "
                        "everything it runs with)");
    o.job_file = flags.text_or("job", "");
    return o;
  }
  if (flags.given("matrix")) {
    o.matrix = flags.text_or("matrix", "");
    apply_preset(flags, specs, suites, *o.matrix, config_dir);
  }
  if (!flags.given("suite-name"))
    throw usage_error("the following arguments are required: --suite-name");
  o.suite_names = parse_suite_names(flags.text_or("suite-name", ""), suites);
  o.filter = flags.texts("filter");
  o.exclude = flags.texts("exclude");
  for (const auto& tier : flags.texts("filter-by-tier"))
    if (auto regex = tier_regex(std::stoll(tier))) o.filter.push_back(*regex);
  for (const auto& tier : flags.texts("exclude-by-tier"))
    if (auto regex = tier_regex(std::stoll(tier))) o.exclude.push_back(*regex);
  if (o.filter.empty()) o.filter = {"."};
  if (o.exclude.empty()) o.exclude = {"^$"};
  o.total_partitions = static_cast<int>(integer_or(flags, "total-partitions", 1));
  o.partition_id = static_cast<int>(integer_or(flags, "partition-id", 0));
  if (o.partition_id < 0 || o.partition_id >= o.total_partitions)
    throw usage_error("argument --partition-id: must be in [0, " +
                      std::to_string(o.total_partitions) + ") for --total-partitions=" +
                      std::to_string(o.total_partitions) + ", got " +
                      std::to_string(o.partition_id));
  o.no_skip = flags.given("no-skip");
  o.accelerator = flags.texts("accelerator");
  o.xla = flags.all("xla");
  o.dynamo = flags.all("dynamo");
  o.test = flags.texts("test");
  o.xla_flags = flags.all("xla-flags");
  o.torch_xla2 = flags.texts("torch-xla2");
  o.precision = flags.texts("precision");
  o.inductor_mode = flags.texts("inductor-mode");
  if (!o.inductor_mode.empty()) {  // a mode no config takes would be a dead flag
    const auto axis = o.dynamo.empty() ? default_dynamo_axis() : o.dynamo;
    if (std::find(axis.begin(), axis.end(), nullable_string("inductor")) == axis.end())
      throw usage_error("argument --inductor-mode: applies to --dynamo=inductor configs, and the "
                        "dynamo axis has none (add --dynamo=inductor)");
  }
  o.enable_functionalization = flags.given("enable-functionalization");
  o.keep_model_data_on_cuda = flags.given("keep-model-data-on-cuda");
  if (const auto v = flags.last("batch-size"); v && *v) {
    o.batch_size = std::stoll(**v);
    if (*o.batch_size <= 0)
      throw usage_error("argument --batch-size: must be positive, got " + **v);
  }
  o.repeat = static_cast<int>(integer_or(flags, "repeat", 10));
  if (o.repeat < 1) throw usage_error("argument --repeat: must be at least 1");
  o.iterations_per_run = static_cast<int>(integer_or(flags, "iterations-per-run", 1));
  if (o.iterations_per_run < 1)
    throw usage_error("argument --iterations-per-run: must be at least 1");
  o.pure_wall_time = flags.given("pure-wall-time");
  o.randomize_input = flags.given("randomize-input");
  o.paired_baseline = flags.text_or("paired-baseline", "");
  o.collect_full_output = flags.given("collect-full-output");
  o.disable_tf32 = flags.given("disable-tf32");
  if (const auto v = flags.last("matmul-precision"); v && *v) o.matmul_precision = **v;
  o.verify = flags.given("verify");
  o.verify_iterations = static_cast<int>(integer_or(flags, "verify-iterations", 1));
  o.verify_deterministic = flags.given("verify-deterministic");
  if (o.verify_iterations < 1)
    throw usage_error("argument --verify-iterations: must be at least 1");
  if (const auto v = flags.last("verify-tolerance"); v && *v) {
    o.verify_tolerance = std::stod(**v);
    if (*o.verify_tolerance < 0) throw usage_error("argument --verify-tolerance: must not be negative");
  }
  o.verify_cosine_similarity = flags.given("verify-cosine-similarity");
  o.metrics = flags.texts("metrics");
  const bool accuracy = std::find(o.metrics.begin(), o.metrics.end(), "accuracy") != o.metrics.end();
  for (const char* name : {"baseline", "rtol", "atol"})
    if (flags.given(name) && !accuracy)
      throw usage_error(std::string("argument --") + name + ": only with --metrics accuracy");
  if (const auto v = flags.last("baseline"); v && *v != "eager") o.accuracy_baseline = *v;
  for (auto [name, field] : {std::pair{"rtol", &runner_options::accuracy_rtol},
                             std::pair{"atol", &runner_options::accuracy_atol}})
    if (const auto v = flags.last(name); v && *v) {
      o.*field = std::stod(**v);
      if (!(*(o.*field) >= 0))
        throw usage_error(std::string("argument --") + name + ": must not be negative, got " + **v);
    }
  o.dump_pytorch_profiles = flags.given("dump-pytorch-profiles");
  o.profile_cuda_cpu = flags.given("profile-cuda-cpu");
  o.profile_cuda_cpu_individual_ops = flags.given("profile-cuda-cpu-individual-ops");
  o.profile_cupti = flags.given("profile-cupti");
  o.save_ir_format = flags.text_or("save-ir-format", "");
  o.dump_hlo = flags.given("dump-hlo");
  o.memory_pass = !flags.given("no-memory-pass");
  o.dump_memory_snapshot = flags.given("dump-memory-snapshot");
  if (o.dump_memory_snapshot && !o.accelerator.empty() &&
      std::find(o.accelerator.begin(), o.accelerator.end(), "cuda") == o.accelerator.end())
    throw usage_error("--dump-memory-snapshot records the CUDA caching allocator: it needs "
                      "--accelerator=cuda among the accelerators (got none)");
  o.collect_dynamo_counters = flags.given("collect-dynamo-counters");
  o.dump_dynamo_counters = flags.given("dump-dynamo-counters");
  o.dry_run = flags.given("dry-run");
  o.print_subprocess = flags.given("print-subprocess");
  o.subprocess_timeout = static_cast<int>(integer_or(flags, "subprocess-timeout", 1800));
  if (o.subprocess_timeout < 1)
    throw usage_error("argument --subprocess-timeout: must be at least 1 second");
  o.subprocess_grace_period = std::stod(flags.text_or("subprocess-grace-period", "5"));
  if (o.subprocess_grace_period < 0)
    throw usage_error("argument --subprocess-grace-period: must not be negative");
  o.progress_bar = flags.given("progress-bar");
  o.log_level = flags.text_or("log-level", "info");
  o.output_dirname = flags.text_or("output-dirname", "./output/");
  o.output_basename = flags.text_or("output-basename", "results.jsonl");
  o.backend_library = flags.text_or("backend-library", "");
  if (!o.backend_library.empty()) {
    if (!std::filesystem::is_regular_file(o.backend_library))
      throw usage_error("argument --backend-library: no such file: " + o.backend_library);
    o.backend_library = std::filesystem::absolute(o.backend_library).lexically_normal().string();
  }
  o.cache_dir = flags.text_or("cache-dir", "");
  if (o.cache_dir.empty())
    o.cache_dir = (std::filesystem::path(o.output_dirname) / "compile_cache").string();
  o.cold_start = flags.given("cold-start");
  o.compile_ahead = static_cast<int>(integer_or(flags, "compile-ahead", 0));
  o.no_compile_service = flags.given("no-compile-service");
  if (o.compile_ahead < 0)
    throw usage_error("argument --compile-ahead: expected the number of compile-only children "
                      "at once (0: off), got " + std::to_string(o.compile_ahead));
  o.torchbench_dir = flags.text_or("torchbench-dir", "");
  o.random_weights = flags.given("random-weights");
  o.model_path = flags.text_or("model-path", "");
  const bool exported = std::find(o.suite_names.begin(), o.suite_names.end(), "exported") !=
                        o.suite_names.end();
  if (exported == o.model_path.empty())
    throw usage_error(o.model_path.empty()
                          ? "--suite-name=exported needs --model-path (the TorchScript program)"
                          : "--model-path is for --suite-name=exported, not " +
                                flags.text_or("suite-name", ""));
  if (!o.model_path.empty()) o.model_path = std::filesystem::absolute(o.model_path).string();
  o.no_resume = flags.given("no-resume");
  o.retry_failed = flags.given("retry-failed");
  o.rerun = flags.texts("rerun");
  for (const auto& selector : o.rerun) (void)parse_rerun_selector(selector);  // usage errors now
  if (!o.rerun.empty() && o.no_resume)
    throw usage_error("--rerun cannot be combined with --no-resume (--rerun replaces chosen "
                      "records inside an existing results file; --no-resume deletes that file)");
  o.save_output = flags.given("save-output");
  o.export_what = flags.text_or("export", "");
  o.export_dir = flags.text_or("export-dir", "");
  if (o.export_what.empty() != o.export_dir.empty())
    throw usage_error("--export and --export-dir must be given together");
  if (!o.export_dir.empty())
    o.export_dir = std::filesystem::absolute(o.export_dir).string();
  if (o.randomize_input && o.export_what != "" && o.export_what != "output")
    throw usage_error("--export " + o.export_what +
                      " cannot be combined with --randomize-input (the inputs are redrawn for every "
                      "step; export outputs only)");
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  const auto timestamp = flags.last("timestamp");
  o.timestamp = timestamp && *timestamp ? std::stod(**timestamp) : now;
  parse_scale_out(flags, o);
  if (!o.rerun.empty() && o.slurm)
    throw usage_error("--rerun cannot be combined with --slurm (run the chosen configs on one host "
                      "into the merged results file instead)");
  if (const auto v = flags.last("experiment-config"); v && *v) o.experiment_config = **v;
  if (const auto v = flags.last("model-config"); v && *v) o.model_config = **v;
  if (o.experiment_config.has_value() != o.model_config.has_value())
    throw usage_error("--experiment-config and --model-config must be given together");
  return o;
}

}  // namespace benchmatrix
