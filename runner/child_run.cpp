#include "runner/child_run.hpp"

#include "backends/backend.hpp"
#include "backends/ivalue_tensors.hpp"
#include "output/file_naming.hpp"
#include "output/results_file.hpp"
#include "runner/availability.hpp"
#include "runner/host_info.hpp"
#include "runner/log.hpp"
#include "runner/record.hpp"
#include "runner/sweep.hpp"
#include "runner/timing_loop.hpp"

#include <torch/serialize.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace benchmatrix {
namespace {

std::string model_name_of(const std::string& model_config) {
  const auto d = parse_json(model_config, "--model-config");
  if (!d.IsObject() || !d.HasMember("model_name") || !d["model_name"].IsString())
    throw std::runtime_error("--model-config: expected {\"model_name\": \"<name>\"}, got " +
                             model_config);
  return d["model_name"].GetString();
}

/// §1.7: highest, or --matmul-precision; unless --disable-tf32, forced to high (the original's
/// quirk: --matmul-precision only matters together with --disable-tf32).
void apply_matmul_precision(const runner_options& o) {
  std::string precision = o.matmul_precision.value_or("highest");
  if (!o.disable_tf32) {
    log_warning("Enabling fast F32 multiplication for PyTorch");
    precision = "high";
  }
  if (precision == "default") precision = "highest";
  at::globalContext().setFloat32MatmulPrecision(precision);
}

long long resolve_batch_size(const model_definition& d, const runner_options& o,
                             const suite_config* config, bool training) {
  const long long model_default =
      training ? *d.default_train_batch_size : d.default_eval_batch_size;
  if (!d.allow_customize_batch_size || (config && config->dont_change_batch_size(d.name)))
    return model_default;
  if (o.batch_size) return *o.batch_size;
  if (config)
    if (auto yaml = config->batch_size(d.name, training ? "train" : "eval")) return *yaml;
  return model_default;
}

/// The result channel: the parent's file (written whole, then renamed into place, so the parent
/// never sees half a record), or — run by hand — the results file itself.
void report(const std::string& line, const runner_options& o) {
  if (const char* path = std::getenv(result_path_variable)) {
    const std::string temporary = std::string(path) + ".partial";
    {
      std::ofstream out(temporary, std::ios::trunc);
      out << line << '\n';
      out.flush();
      if (!out) throw std::runtime_error("cannot write the result file " + temporary);
    }
    std::filesystem::rename(temporary, path);
    return;
  }
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

int run_child(const runner_options& o, const suite_config* config) {
  const auto experiment = experiment_config::from_config_json(*o.experiment_config);
  const auto model_name = model_name_of(*o.model_config);
  const model_definition* definition = find_model(o.suite_name, model_name);
  if (!definition)
    throw std::runtime_error("suite " + o.suite_name + " has no model named '" + model_name + "'");
  if (auto reason = unavailable_reason(experiment))
    throw std::runtime_error("cannot run this config: " + *reason);
  const bool training = experiment.test == "train";
  if (training && !definition->default_train_batch_size)
    throw std::runtime_error(model_name + " is eval-only in TorchBench; test=train is not supported");
  const torch::Device device = experiment.accelerator == "cuda" ? torch::kCUDA : torch::kCPU;
  if (device.is_cuda() && !torch::cuda::is_available())
    throw std::runtime_error("accelerator=cuda but LibTorch sees no CUDA device");

  apply_matmul_precision(o);
  // §7.3: AMP off on the CPU; on CUDA for training and force_amp models. Inference without AMP runs
  // in bfloat16 (float16 for force_fp16 models); training keeps float32.
  const bool use_amp = device.is_cuda() && (training || (config && config->force_amp(model_name)));
  std::optional<torch::ScalarType> conversion;
  if (!training && !use_amp)
    conversion = config && config->force_fp16(model_name) ? torch::kHalf : torch::kBFloat16;

  model_build_options build;
  build.batch_size = resolve_batch_size(*definition, o, config, training);
  build.device = device;
  build.training = training;
  reset_rng_state();
  model_instance model = definition->build(build);
  if (conversion) {
    model.module->to(*conversion);
    for (auto& input : model.example_inputs)
      input = map_tensors(input, [&](const torch::Tensor& t) {
        return t.is_floating_point() ? t.to(*conversion) : t;
      });
  }

  step_options step_opts;
  step_opts.training = training;
  step_opts.use_amp = use_amp;
  step_opts.device = device;
  step_opts.use_sgd = trains_with_sgd(model_name);
  step_opts.collect_full_output = o.collect_full_output;
  const step_function step = make_eager_step(model, step_opts);

  timing_options timing;
  timing.repeat = o.repeat;
  timing.iterations_per_run = o.iterations_per_run;
  timing.randomize_input = o.randomize_input;
  timing.pure_wall_time = o.pure_wall_time;
  timing.device = device;
  const auto save_output = [&](int r, const c10::IValue& output) {
    if (!o.save_output || output.isNone()) return;
    const auto path = results_file_path(std::filesystem::absolute(o.output_dirname), experiment,
                                        model_name, std::to_string(r), "output", "pt");
    const auto cpu_output = map_tensors(output, [](const torch::Tensor& t) { return t.cpu(); });
    const std::vector<char> bytes = torch::pickle_save(cpu_output);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path.string());
  };
  std::vector<repeat_timing> timings;
  {
    std::optional<torch::NoGradGuard> no_grad;  // pick_grad: no_grad for eval
    if (!training) no_grad.emplace();
    timings = run_timed_repeats(step, model.example_inputs, timing, save_output);
  }

  record_identity id;
  id.suite_name = o.suite_name;
  id.model_name = model_name;
  id.experiment = experiment;
  id.accelerator_model = accelerator_model(experiment.accelerator);
  id.batch_size = model.batch_size;
  id.repeat = o.repeat;
  id.iterations_per_run = o.iterations_per_run;
  id.timestamp = o.timestamp;
  json_document d;
  json_value metrics(rapidjson::kObjectType);
  metrics.AddMember("total_time", seconds_list(timings, &repeat_timing::total_time, d.GetAllocator()),
                    d.GetAllocator());
  metrics.AddMember("per_iter_time",
                    seconds_list(timings, &repeat_timing::per_iter_time, d.GetAllocator()),
                    d.GetAllocator());
  report(record_line(id, metrics, "VERIFIER_SKIPPED", d), o);
  return 0;
}

}  // namespace benchmatrix
