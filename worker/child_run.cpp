#include "worker/child_run.hpp"

#include "backends/availability.hpp"
#include "backends/backend.hpp"
#include "backends/backend_counters.hpp"
#include "backends/backend_name.hpp"
#include "backends/paired_baseline.hpp"
#include "backends/xla_metrics.hpp"
#include "core/file_naming.hpp"
#include "core/host_info.hpp"
#include "core/log.hpp"
#include "core/machine_state.hpp"
#include "core/noise_verdict.hpp"
#include "core/paired_speedups.hpp"
#include "core/python_json.hpp"
#include "core/record.hpp"
#include "core/results_file.hpp"
#include "core/results_record.hpp"
#include "core/text_file.hpp"
#include "ops/kernel_library.hpp"
#include "profiler/ir_dump.hpp"
#include "torch_support/cuda_memory_history.hpp"
#include "torch_support/gpu_pci_bus_id.hpp"
#include "torch_support/ivalue_tensors.hpp"
#include "torch_support/library_versions.hpp"
#include "torch_support/torch_run_environment.hpp"
#include "worker/accuracy_metric.hpp"
#include "worker/memory_pass.hpp"
#include "worker/model_setup.hpp"
#include "worker/numerics_export.hpp"
#include "worker/paired_timing.hpp"
#include "worker/profile_pass.hpp"
#include "worker/timing_loop.hpp"

#include <torch/serialize.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>

namespace benchmatrix {

bool report_child_result(const child_job& job, const std::string& line) {
  if (const std::string& path = job.result_path; !path.empty()) {
    replace_text_file(path, line + '\n');  // the parent sees the whole record or none
    return true;
  }
  return false;
}

namespace {

/// The parent's result channel, or — run by hand — the results file itself.
void report(const std::string& line, const child_job& job) {
  if (report_child_result(job, line)) return;
  const child_settings& o = job.settings;
  results_writer writer(std::filesystem::absolute(o.output_dirname) / o.output_basename);
  writer.append(line);
}

json_value seconds_list(const std::vector<repeat_timing>& timings, double repeat_timing::*field,
                        json_allocator& a) {
  json_value list(rapidjson::kArrayType);
  for (const auto& t : timings) list.PushBack(t.*field, a);
  return list;
}

}  // namespace

backend_context make_backend_context(const child_job& job) {
  backend_context context;
  context.model_name = job.model_name;
  context.cache_dir = std::filesystem::absolute(job.settings.cache_dir);
  context.cold_start = job.settings.cold_start;
  // the parent's --timestamp, the same for every child of a sweep; none for a child run by hand
  if (job.timestamp > 0) context.sweep_token = python_float_repr(job.timestamp);
  context.compile_only = job.role == child_role::compile_ahead;  // its step is never run
  context.inductor_mode = job.experiment.inductor_mode;
  context.precision = job.experiment.precision;
  return context;
}

/// The XLA metrics of §4.3, one value per repeat: the compile counts in the first repeat (where the
/// original's first call compiles), executions and host-side step time in each.
void add_xla_metrics(json_value& metrics, const xla_counters& compile,
                     const std::vector<xla_counters>& repeats, int iterations_per_run,
                     json_allocator& a) {
  json_value compile_time(rapidjson::kArrayType), compile_number(rapidjson::kArrayType),
      execute_time(rapidjson::kArrayType), execute_number(rapidjson::kArrayType),
      trace_total(rapidjson::kArrayType), trace_per_iter(rapidjson::kArrayType);
  for (size_t r = 0; r < repeats.size(); ++r) {
    compile_time.PushBack(r == 0 ? compile.compile_time_s : 0.0, a);
    compile_number.PushBack(static_cast<int64_t>(r == 0 ? compile.compile_number : 0), a);
    execute_time.PushBack(repeats[r].execute_time_s, a);
    execute_number.PushBack(static_cast<int64_t>(repeats[r].execute_number), a);
    trace_total.PushBack(repeats[r].trace_time_s, a);
    trace_per_iter.PushBack(repeats[r].trace_time_s / iterations_per_run, a);
  }
  metrics.AddMember("trace_total_time", trace_total, a);
  metrics.AddMember("trace_per_iter_time", trace_per_iter, a);
  metrics.AddMember("xla_CompileTime_time_s", compile_time, a);
  metrics.AddMember("xla_CompileTime_number", compile_number, a);
  metrics.AddMember("xla_ExecuteTime_time_s", execute_time, a);
  metrics.AddMember("xla_ExecuteTime_number", execute_number, a);
}

void add_compile_metrics(json_value& metrics, json_value& compile, const compile_report& report,
                         int repeat, json_allocator& a) {
  metrics.AddMember("compile_time_s", once_per_record_list(report.compile_time_s, repeat, a), a);
  if (report.compiler_s)
    metrics.AddMember("compile_helper_s", once_per_record_list(*report.compiler_s, repeat, a), a);
  if (report.cache_hit) compile.AddMember("cache_hit", *report.cache_hit, a);
  if (!report.cache_note.empty())
    compile.AddMember("cache_rebuilt", json_value(report.cache_note.c_str(), a), a);
  if (!report.capture_fallback.empty())
    compile.AddMember("capture_fallback", json_value(report.capture_fallback.c_str(), a), a);
  if (!report.breakdown_s.empty()) {
    json_value breakdown(rapidjson::kObjectType);
    for (const auto& [phase, seconds] : report.breakdown_s) {
      json_value name(phase.c_str(), a);
      breakdown.AddMember(name, json_value(seconds), a);
    }
    compile.AddMember("breakdown_s", breakdown, a);
  }
  if (!report.preparation_s.empty()) {
    json_value phases(rapidjson::kObjectType);
    for (const auto& [phase, seconds] : report.preparation_s)
      phases.AddMember(json_value(phase.c_str(), a), json_value(seconds), a);
    compile.AddMember("preparation_s", phases, a);
  }
  if (!report.helper.empty()) compile.AddMember("helper", json_value(report.helper.c_str(), a), a);
  if (report.compile_threads) compile.AddMember("compile_threads", *report.compile_threads, a);
  if (!report.freezing_failure.empty())
    compile.AddMember("freezing_failure", json_value(report.freezing_failure.c_str(), a), a);
  if (!report.program.empty())
    compile.AddMember("program", json_value(report.program.c_str(), a), a);
  if (!report.package.empty())
    compile.AddMember("package", json_value(report.package.c_str(), a), a);
  if (!report.random_ops.empty())
    compile.AddMember("random_ops", json_value(report.random_ops.c_str(), a), a);
}

namespace {

/// The record's identity before the model is built (batch size: --batch-size, if given).
record_identity job_identity(const child_job& job) {
  record_identity id;
  id.suite_name = job.suite_name;
  id.model_name = job.model_name;
  id.experiment = job.experiment;
  id.accelerator_model = accelerator_model(job.experiment.accelerator);
  id.batch_size = job.settings.batch_size;
  id.repeat = job.settings.repeat;
  id.iterations_per_run = job.settings.iterations_per_run;
  id.timestamp = job.timestamp;
  return id;
}

/// A config's model and backend step(s), built once and used by every phase after. Never moved:
/// the steps refer to the model. Members are destroyed in the reverse of this order.
struct prepared_config {
  // --paired-baseline: the baseline's config, when this child pairs (backends/paired_baseline.hpp)
  std::optional<experiment_config> baseline_experiment;
  std::optional<prepared_model> built;
  backend_step backend;
  // The baseline's step, on the same model instance (worker/paired_timing.hpp: what the two share
  // and why each keeps its own gradients in train configs).
  backend_step baseline_backend;
  std::optional<paired_gradients> gradients;

  [[nodiscard]] model_instance& model() { return built->model; }
  [[nodiscard]] const model_instance& model() const { return built->model; }
  [[nodiscard]] const step_options& step_settings() const { return built->step; }
  [[nodiscard]] torch::Device device() const { return built->step.device; }
  [[nodiscard]] bool training() const { return built->step.training; }
};

/// Logs a SKIP message and reports it as the config's record.
void report_skip(const child_job& job, const record_identity& id, const std::string& message) {
  log_warning(message);
  report(error_record_line(id, message, "VERIFIER_SKIPPED"), job);
}

/// The prefix of a SKIP message about the --paired-baseline config.
[[nodiscard]] std::string paired_baseline_skip(const child_settings& o) {
  return "SKIP: --paired-baseline=" + o.paired_baseline + ": ";
}

/// Builds the job's model into `prepared` and sets `id`; false when a SKIP record was reported.
[[nodiscard]] bool prepare_model_or_skip(const child_job& job, const suite_config* config,
                                         record_identity& id, prepared_config& prepared) {
  const child_settings& o = job.settings;
  const experiment_config& experiment = job.experiment;
  const model_definition* definition = find_model(job.suite_name, job.model_name);
  if (!definition)
    throw std::runtime_error("suite " + job.suite_name + " has no model named '" +
                             job.model_name + "'");
  if (auto reason = unavailable_reason(experiment))
    throw std::runtime_error("cannot run this config: " + *reason);
  if (!o.paired_baseline.empty())
    prepared.baseline_experiment = paired_baseline_experiment(experiment, o.paired_baseline);
  apply_matmul_precision(o);
  id = job_identity(job);
  try {
    prepared.built.emplace(prepare_model(*definition, o, config, experiment));
  } catch (const model_unavailable& e) {  // a download, package or file missing here: not a fault
    report_skip(job, id, std::string("SKIP: ") + e.what());
    return false;
  }
  id.batch_size = prepared.model().batch_size;
  return true;
}

/// Builds the --paired-baseline step on the same model; false when a SKIP record was reported.
[[nodiscard]] bool build_baseline_step(const child_job& job, const record_identity& id,
                                       prepared_config& prepared) {
  if (prepared.training()) {
    prepared.gradients.emplace(prepared.model().module->parameters());
    // the experiment step's own gradients, e.g. the static ones a CUDA graph captured
    prepared.gradients->leave(paired_side::experiment);
    prepared.gradients->enter(paired_side::baseline);
  }
  try {
    prepared.baseline_backend =
        make_backend_step(*prepared.baseline_experiment, prepared.model(),
                          prepared.step_settings(), make_backend_context(job));
  } catch (const backend_unsupported& e) {
    report_skip(job, id, paired_baseline_skip(job.settings) + e.what());
    return false;
  }
  if (prepared.gradients) {
    prepared.gradients->leave(paired_side::baseline);
    prepared.gradients->enter(paired_side::experiment);
  }
  return true;
}

/// Builds the experiment's step (and the baseline's); false when a SKIP record was reported.
[[nodiscard]] bool build_backend_steps(const child_job& job, const record_identity& id,
                                       prepared_config& prepared) {
  const child_settings& o = job.settings;
  // --backend-library: the overrides apply from here on (the model was built without them).
  if (!o.backend_library.empty()) load_kernel_library(o.backend_library);

  if (prepared.baseline_experiment) {
    if (auto reason = unavailable_reason(*prepared.baseline_experiment)) {
      report_skip(job, id, paired_baseline_skip(o) + *reason);
      return false;
    }
  }
  try {
    prepared.backend = make_backend_step(job.experiment, prepared.model(),
                                         prepared.step_settings(), make_backend_context(job));
  } catch (const backend_unsupported& e) {
    report_skip(job, id, std::string("SKIP: ") + e.what());
    return false;
  }
  if (prepared.baseline_experiment) return build_baseline_step(job, id, prepared);
  return true;
}

/// Reports the compile_ahead role's record: the compile figures, no timings.
void report_compile_ahead(const child_job& job, const record_identity& id,
                          const backend_step& backend) {
  // The compile cache now holds what the timing child will load; the parent keeps these figures
  // for the timing record's compile.ahead (runner/compile_ahead.hpp).
  json_document d(rapidjson::kObjectType);
  json_value metrics(rapidjson::kObjectType);
  json_value compile(rapidjson::kObjectType);
  if (backend.compile)
    add_compile_metrics(metrics, compile, *backend.compile, /*repeat=*/1, d.GetAllocator());
  json_value extras(rapidjson::kObjectType);
  extras.AddMember("compile", compile, d.GetAllocator());
  report(record_line(id, metrics, "VERIFIER_SKIPPED", &extras), job);
}

/// The timed repeats' options from the job's settings.
[[nodiscard]] timing_options make_timing_options(const child_settings& o, torch::Device device) {
  timing_options timing;
  timing.repeat = o.repeat;
  timing.iterations_per_run = o.iterations_per_run;
  timing.randomize_input = o.randomize_input;
  timing.pure_wall_time = o.pure_wall_time;
  timing.device = device;
  return timing;
}

/// --save-output: writes repeat `r`'s last output (on the CPU) as a pickle.
void save_repeat_output(const child_job& job, int r, const c10::IValue& output) {
  const child_settings& o = job.settings;
  if (!o.save_output || output.isNone()) return;
  const auto path = results_file_path(std::filesystem::absolute(o.output_dirname), job.experiment,
                                      job.model_name, std::to_string(r), "output", "pt");
  const auto cpu_output = map_tensors(output, [](const torch::Tensor& t) { return t.cpu(); });
  const std::vector<char> bytes = torch::pickle_save(cpu_output);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

/// --export: writes the example inputs (every repeat steps on clones of them) and/or the output of
/// the first timed repeat's last step, written right after that repeat's clock stopped.
void export_numerics(const child_job& job, const model_instance& model, const record_identity& id,
                     torch::Device device, const c10::IValue& output) {
  const child_settings& o = job.settings;
  const experiment_config& experiment = job.experiment;
  const bool export_inputs = o.export_what == "input" || o.export_what == "both";
  const bool export_outputs = o.export_what == "output" || o.export_what == "both";
  export_identity identity;
  identity.model = job.model_name;
  identity.suite = job.suite_name;
  identity.backend = display_backend_name(experiment.dynamo, experiment.xla, experiment.torch_xla2);
  identity.test = experiment.test;
  identity.batch_size = model.batch_size;
  identity.accelerator = experiment.accelerator;
  identity.accelerator_model = id.accelerator_model;
  identity.seed = benchmark_seed;  // set before the model is built and before each repeat
  identity.device = device.str();
  identity.torch_version = libtorch_version();
  identity.cuda_version = cuda_build_version();
  if (device.is_cuda()) identity.cudnn_version = cudnn_runtime_version();
  const auto directory = std::filesystem::path(o.export_dir) /
                         export_config_name(experiment, job.model_name, model.batch_size);
  try {
    write_numerics_export(directory, identity, export_inputs ? &model.example_inputs : nullptr,
                          export_outputs ? &output : nullptr);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--export: ") + e.what());
  }
}

/// --dump-dynamo-counters: writes repeat `r`'s counters (the preparation's with the first).
void dump_repeat_counters(const child_job& job, const backend_step& backend, torch::Device device,
                          int r) {
  const child_settings& o = job.settings;
  if (!o.dump_dynamo_counters) return;
  json_document counters;
  counters.CopyFrom(backend_counters(job.experiment, backend, device.is_cuda(),
                                     o.iterations_per_run, r == 0, counters.GetAllocator()),
                    counters.GetAllocator());
  const auto path = results_file_path(std::filesystem::absolute(o.output_dirname), job.experiment,
                                      job.model_name, std::to_string(r), "dynamo-counters", "txt");
  std::ofstream out(path, std::ios::trunc);
  out << to_python_json(counters) << '\n';
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

/// What the timed repeats measured, and the machine and XLA counters around them.
struct timed_run {
  std::vector<repeat_timing> timings, baseline_timings;  // baseline's: --paired-baseline only
  machine_snapshot state_start, state_end;
  xla_counters xla_compile;               // the preparation's compile counts
  std::vector<xla_counters> xla_repeats;  // one per repeat
};

/// The GPU this child runs on, found by its PCI bus id (NVML numbers GPUs physically).
[[nodiscard]] gpu_choice timed_gpu(torch::Device device, const experiment_config& experiment) {
  gpu_choice gpu;
  if (device.is_cuda())
    gpu.pci_bus_id = gpu_pci_bus_id(device);
  else
    gpu.unavailable = "accelerator is " + experiment.accelerator;
  return gpu;
}

/// Runs the timed (or paired) repeats with their after-repeat hooks and the snapshots around them.
[[nodiscard]] timed_run run_timing(const child_job& job, const record_identity& id,
                                   prepared_config& prepared, const timing_options& timing) {
  timed_run run;
  // XLA: the preparation's compile counts, then each repeat's (warm-up executions are not counted).
  run.xla_compile = process_xla_counters();
  process_xla_counters() = {};
  const torch::Device device = prepared.device();
  const auto after_repeat = [&](int r, const c10::IValue& output) {
    run.xla_repeats.push_back(process_xla_counters());
    process_xla_counters() = {};
    save_repeat_output(job, r, output);
    dump_repeat_counters(job, prepared.backend, device, r);
    if (r == 0 && !job.settings.export_what.empty())
      export_numerics(job, prepared.model(), id, device, output);
  };
  // The machine right before the first timed repeat and right after the last (issue 24).
  const gpu_choice gpu = timed_gpu(device, job.experiment);
  std::optional<torch::NoGradGuard> no_grad;  // pick_grad: no_grad for eval
  if (!prepared.training()) no_grad.emplace();
  run.state_start = take_machine_snapshot(gpu, device.is_cuda());
  const model_inputs& inputs = prepared.model().example_inputs;
  if (prepared.baseline_experiment) {
    auto paired = run_paired_repeats(prepared.baseline_backend.step, prepared.backend.step, inputs,
                                     timing, prepared.gradients ? &*prepared.gradients : nullptr,
                                     after_repeat);
    run.timings = std::move(paired.experiment);
    run.baseline_timings = std::move(paired.baseline);
  } else {
    run.timings = run_timed_repeats(prepared.backend.step, inputs, timing, after_repeat);
  }
  run.state_end = take_machine_snapshot(gpu, device.is_cuda());
  return run;
}

/// The per-iteration times (seconds) of `timings`, one per repeat.
[[nodiscard]] std::vector<double> per_iter_times(const std::vector<repeat_timing>& timings) {
  std::vector<double> seconds;
  for (const auto& t : timings) seconds.push_back(t.per_iter_time);
  return seconds;
}

/// --paired-baseline: the baseline's repeats beside the experiment's, and the per-pair speedups.
void add_paired_speedups(json_value& metrics, json_value& extras,
                         const experiment_config& baseline_experiment, const timed_run& run,
                         json_allocator& a) {
  metrics.AddMember("baseline_total_time",
                    seconds_list(run.baseline_timings, &repeat_timing::total_time, a), a);
  metrics.AddMember("baseline_per_iter_time",
                    seconds_list(run.baseline_timings, &repeat_timing::per_iter_time, a), a);
  const std::vector<double> baseline_per_iter = per_iter_times(run.baseline_timings);
  const std::vector<double> experiment_per_iter = per_iter_times(run.timings);
  const paired_speedups paired = compute_paired_speedups(
      display_backend_name(baseline_experiment.dynamo, baseline_experiment.xla,
                           baseline_experiment.torch_xla2),
      baseline_per_iter, experiment_per_iter);
  log_info("paired with " + paired.baseline + ": speedup " +
           python_float_repr(paired.speedup.median) + " [" +
           python_float_repr(paired.speedup.low) + ", " + python_float_repr(paired.speedup.high) +
           "] over " + std::to_string(paired.speedup.count) + " pair(s)");
  extras.AddMember("paired", paired_speedups_json(paired, a), a);
}

/// Adds model_source: a loaded program's origin, or the hand-written C++ module's.
void add_model_source(json_value& extras, const child_job& job, const model_instance& model,
                      json_allocator& a) {
  json_value source(rapidjson::kObjectType);
  const std::map<std::string, std::string> built_in = {
      {"kind", "built-in"},
      {"runtime",
       "benchmatrix's hand-written LibTorch C++ module (suites/" + job.suite_name + "/)"}};
  for (const auto& [key, value] : model.source.empty() ? built_in : model.source)
    source.AddMember(json_value(key.c_str(), a), json_value(value.c_str(), a), a);
  extras.AddMember("model_source", source, a);
}

/// --save-ir-format and --dump-hlo: writes the step's IR dumps (what it cannot, to ir_note).
void add_ir_dumps(json_value& extras, const child_job& job, const backend_step& backend,
                  json_allocator& a) {
  const child_settings& o = job.settings;
  if (o.save_ir_format.empty() && !o.dump_hlo) return;
  const experiment_config& experiment = job.experiment;
  ir_dump_request dumps;
  dumps.save_format = o.save_ir_format;
  dumps.dump_sources = o.dump_hlo;
  dumps.output_dir = std::filesystem::absolute(o.output_dirname);
  dumps.experiment = experiment;
  dumps.model_name = job.model_name;
  dumps.backend = display_backend_name(experiment.dynamo, experiment.xla, experiment.torch_xla2);
  write_ir_dumps(backend, dumps, extras, a);  // its ir_note
}

/// Adds the timings, paired speedups, XLA and compile figures and the backend's extras.
void add_timing_results(json_value& metrics, json_value& extras, const child_job& job,
                        const prepared_config& prepared, const timed_run& run, json_allocator& a) {
  const child_settings& o = job.settings;
  const backend_step& backend = prepared.backend;
  metrics.AddMember("total_time", seconds_list(run.timings, &repeat_timing::total_time, a), a);
  metrics.AddMember("per_iter_time", seconds_list(run.timings, &repeat_timing::per_iter_time, a),
                    a);
  // Every value in metrics is one number per repeat (the original's result_analyzer.py reads each
  // key as such); the rest goes to top-level keys after verification_code, in this order.
  if (prepared.baseline_experiment)
    add_paired_speedups(metrics, extras, *prepared.baseline_experiment, run, a);
  if (job.experiment.xla)
    add_xla_metrics(metrics, run.xla_compile, run.xla_repeats, o.iterations_per_run, a);
  if (backend.compile) {
    json_value compile(rapidjson::kObjectType);
    add_compile_metrics(metrics, compile, *backend.compile, o.repeat, a);
    if (!compile.ObjectEmpty()) extras.AddMember("compile", compile, a);
  }
  add_model_source(extras, job, prepared.model(), a);
  if (!o.backend_library.empty())
    extras.AddMember("backend_library", json_value(o.backend_library.c_str(), a), a);
  if (o.collect_dynamo_counters)
    extras.AddMember("dynamo_counters",
                     backend_counters(job.experiment, backend, prepared.device().is_cuda(),
                                      static_cast<long long>(o.repeat) * o.iterations_per_run,
                                      /*with_compile=*/true, a),
                     a);
  add_ir_dumps(extras, job, backend, a);
}

/// --memory-pass: peak memory, from a pass of its own.
void add_memory_pass(json_value& metrics, json_value& extras, const child_job& job,
                     const prepared_config& prepared, const timing_options& timing,
                     json_allocator& a) {
  const experiment_config& experiment = job.experiment;
  const backend_step& backend = prepared.backend;
  std::optional<torch::NoGradGuard> no_grad;
  if (!prepared.training()) no_grad.emplace();
  json_value memory = model_memory_json(
      prepared.model(), prepared.step_settings(),
      display_backend_name(experiment.dynamo, experiment.xla, experiment.torch_xla2),
      backend.graph_capture, a);
  run_memory_pass(backend.step, prepared.model().example_inputs, timing, backend.graph_capture,
                  metrics, memory, a);
  extras.AddMember("memory", memory, a);
}

/// The profiling passes --dump-pytorch-profiles, --profile-cuda-cpu(-individual-ops) and
/// --profile-cupti ask for; their profile object goes to extras when not empty.
void add_profile_passes(json_value& metrics, json_value& extras, const child_job& job,
                        const prepared_config& prepared, const timing_options& timing,
                        json_allocator& a) {
  const child_settings& o = job.settings;
  const experiment_config& experiment = job.experiment;
  profile_request profiling;
  profiling.dump_profiles = o.dump_pytorch_profiles;
  profiling.cpu_cuda_times = o.profile_cuda_cpu;
  profiling.individual_ops = o.profile_cuda_cpu_individual_ops;
  profiling.cupti = o.profile_cupti;
  if (!profiling.any()) return;
  profiling.output_dir = std::filesystem::absolute(o.output_dirname);
  profiling.experiment = experiment;
  profiling.model_name = job.model_name;
  // The original's key for non-XLA runs, named after what ran: inductor_ops, eager_ops, ...
  profiling.ops_key =
      display_backend_name(experiment.dynamo, experiment.xla, experiment.torch_xla2) + "_ops";
  std::optional<torch::NoGradGuard> no_grad;
  if (!prepared.training()) no_grad.emplace();
  json_value profile(rapidjson::kObjectType);
  run_profile_passes(prepared.backend.step, prepared.model().example_inputs, timing, profiling,
                     metrics, profile, a);
  if (!profile.ObjectEmpty()) extras.AddMember("profile", profile, a);
}

/// Runs the passes after the timed repeats, in order: memory, accuracy, profiling.
void run_passes_after_timing(json_value& metrics, json_value& extras, const child_job& job,
                             prepared_config& prepared, const timing_options& timing,
                             json_allocator& a) {
  // Peak memory (issue 26): a pass of its own after the timed repeats, never inside them.
  if (job.settings.memory_pass) add_memory_pass(metrics, extras, job, prepared, timing, a);
  // --metrics accuracy: after the timed repeats, never inside them.
  if (job.settings.accuracy_metric) {
    json_value accuracy(rapidjson::kObjectType);
    add_accuracy_metrics(metrics, accuracy, a, job, prepared.model(), prepared.step_settings(),
                         prepared.backend.step);
    extras.AddMember("accuracy", accuracy, a);
  }
  // Profiling passes: after the timed repeats (and the accuracy check), never inside them.
  add_profile_passes(metrics, extras, job, prepared, timing, a);
}

/// Adds run_environment, then machine_state and the noise verdict on the timed repeats.
void add_run_conditions(json_value& extras, const timed_run& run, bool paired, json_allocator& a) {
  // The settings this child timed under (torch build, threads, CPU affinity): a comparison of two
  // nights tells a `taskset` or OMP_NUM_THREADS change from a change of the code.
  extras.AddMember("run_environment", to_json(torch_run_environment(), a), a);
  // Last: the machine state around the timed repeats and the verdict on them.
  json_value machine_state(rapidjson::kObjectType);
  machine_state.AddMember("start", machine_snapshot_json(run.state_start, a), a);
  machine_state.AddMember("end", machine_snapshot_json(run.state_end, a), a);
  extras.AddMember("machine_state", machine_state, a);
  const std::vector<double> per_iter_time = per_iter_times(run.timings);
  const std::vector<double> baseline_per_iter_time = per_iter_times(run.baseline_timings);
  const noise_verdict noise = judge_noise(per_iter_time, run.state_start, run.state_end,
                                          paired ? &baseline_per_iter_time : nullptr);
  extras.AddMember("noise", noise_verdict_json(noise, a), a);
}

/// --dump-memory-snapshot: the allocator's history from before the backend's step is built to
/// after the timed repeats, for a CUDA timing child; nullopt otherwise (a CPU config says so).
[[nodiscard]] std::optional<cuda_memory_history> start_memory_history(const child_job& job) {
  if (!job.settings.dump_memory_snapshot || job.role != child_role::timing) return std::nullopt;
  if (job.experiment.accelerator != "cuda") {
    log_info("--dump-memory-snapshot: no snapshot for a " + job.experiment.accelerator +
             " config (CUDA configs only)");
    return std::nullopt;
  }
  return std::make_optional<cuda_memory_history>();
}

void dump_memory_history(const std::optional<cuda_memory_history>& history, const child_job& job) {
  if (!history) return;
  const auto path = results_file_path(job.settings.output_dirname, job.experiment, job.model_name,
                                      "", "memory-snapshot", "pickle");
  history->dump(path);
  log_info("memory snapshot: " + path.string() + " (https://pytorch.org/memory_viz reads it)");
}

/// Runs one config and reports its one record (a SKIP record where the model or a step cannot run).
int run_config(const child_job& job, const suite_config* config) {
  record_identity id;
  prepared_config prepared;
  if (!prepare_model_or_skip(job, config, id, prepared)) return 0;
  const std::optional<cuda_memory_history> history = start_memory_history(job);
  if (!build_backend_steps(job, id, prepared)) return 0;
  if (job.role == child_role::compile_ahead) {
    report_compile_ahead(job, id, prepared.backend);
    return 0;
  }
  const timing_options timing = make_timing_options(job.settings, prepared.device());
  const timed_run run = run_timing(job, id, prepared, timing);
  dump_memory_history(history, job);

  json_document d;
  json_value metrics(rapidjson::kObjectType);
  json_value extras(rapidjson::kObjectType);
  add_timing_results(metrics, extras, job, prepared, run, d.GetAllocator());
  run_passes_after_timing(metrics, extras, job, prepared, timing, d.GetAllocator());
  add_run_conditions(extras, run, prepared.baseline_experiment.has_value(), d.GetAllocator());
  report(record_line(id, metrics, "VERIFIER_SKIPPED", &extras), job);
  return 0;
}

}  // namespace

int run_child(const child_job& job, const suite_config* config) {
  try {
    return run_config(job, config);
  } catch (const c10::OutOfMemoryError& e) {
    // An error record that says so plainly, with the allocator's figures; the child exits and the
    // parent's next child starts in a fresh process, on a device with none of this one's memory.
    const torch::Device device =
        job.experiment.accelerator == "cuda" ? torch::Device(torch::kCUDA) : torch::kCPU;
    const std::string text = out_of_memory_text(e, device);
    log_error(text);
    report(error_record_line(job_identity(job), text, "VERIFIER_DIDNT_RUN"), job);
    return 0;
  }
}

}  // namespace benchmatrix
