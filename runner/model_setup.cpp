#include "runner/model_setup.hpp"

#include "backends/ivalue_tensors.hpp"
#include "runner/log.hpp"
#include "runner/timing_loop.hpp"

#include <stdexcept>

namespace benchmatrix {
namespace {

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

}  // namespace

void convert_floating_point_state(torch::nn::Module& module, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  for (auto& parameter : module.parameters())
    if (parameter.is_floating_point()) parameter.set_data(parameter.to(dtype));
  for (auto& buffer : module.buffers())
    if (buffer.is_floating_point()) buffer.set_data(buffer.to(dtype));
}

void apply_matmul_precision(const runner_options& o) {
  // highest, or --matmul-precision; unless --disable-tf32, forced to high (the original's quirk:
  // --matmul-precision only matters together with --disable-tf32).
  std::string precision = o.matmul_precision.value_or("highest");
  if (!o.disable_tf32) {
    log_warning("Enabling fast F32 multiplication for PyTorch");
    precision = "high";
  }
  if (precision == "default") precision = "highest";
  at::globalContext().setFloat32MatmulPrecision(precision);
}

prepared_model prepare_model(const model_definition& definition, const runner_options& o,
                             const suite_config* config, const experiment_config& experiment,
                             std::optional<torch::ScalarType> force_dtype) {
  const bool training = experiment.test == "train";
  if (training && !definition.default_train_batch_size)
    throw std::runtime_error(definition.name +
                             " is eval-only in TorchBench; test=train is not supported");
  const torch::Device device = experiment.accelerator == "cuda" ? torch::kCUDA : torch::kCPU;
  if (device.is_cuda() && !torch::cuda::is_available())
    throw std::runtime_error("accelerator=cuda but LibTorch sees no CUDA device");

  // §7.3: AMP off on the CPU; on CUDA for training and force_amp models. Inference without AMP runs
  // in bfloat16 (float16 for force_fp16 models); training keeps float32.
  bool use_amp =
      device.is_cuda() && (training || (config && config->force_amp(definition.name)));
  std::optional<torch::ScalarType> conversion;
  if (!training && !use_amp)
    conversion = config && config->force_fp16(definition.name) ? torch::kHalf : torch::kBFloat16;
  if (force_dtype) {
    conversion = force_dtype;
    use_amp = false;  // autocast would leave float64 alone anyway; off says so
  }

  model_build_options build;
  build.batch_size = resolve_batch_size(definition, o, config, training);
  build.device = device;
  build.training = training;
  reset_rng_state();
  prepared_model prepared{definition.build(build), {}};
  auto& model = prepared.model;
  if (conversion) {
    convert_floating_point_state(*model.module, *conversion);
    for (auto& input : model.example_inputs)
      input = map_tensors(input, [&](const torch::Tensor& t) {
        return t.is_floating_point() ? t.to(*conversion) : t;
      });
  }
  auto& step = prepared.step;
  step.training = training;
  step.use_amp = use_amp;
  step.device = device;
  step.use_sgd = trains_with_sgd(definition.name);
  step.collect_full_output = o.collect_full_output;
  return prepared;
}

}  // namespace benchmatrix
