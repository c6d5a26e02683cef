#include "worker/model_setup.hpp"

#include "backends/backend_registry.hpp"
#include "backends/inductor_program.hpp"
#include "core/log.hpp"
#include "suites/precision_rule.hpp"
#include "torch_support/ivalue_tensors.hpp"
#include "worker/timing_loop.hpp"

#include <stdexcept>
#include <string>

namespace benchmatrix {
namespace {

/// The dtype of a precision decision as LibTorch spells it.
torch::ScalarType scalar_type_of(cast_dtype dtype) {
  switch (dtype) {
  case cast_dtype::float16: return torch::kHalf;
  case cast_dtype::bfloat16: return torch::kBFloat16;
  case cast_dtype::float64: return torch::kDouble;
  }
  throw std::logic_error("unknown cast_dtype");
}

cast_dtype cast_dtype_of(torch::ScalarType type) {
  switch (type) {
  case torch::kHalf: return cast_dtype::float16;
  case torch::kBFloat16: return cast_dtype::bfloat16;
  case torch::kDouble: return cast_dtype::float64;
  default:
    throw std::invalid_argument(std::string("prepare_model: cannot force dtype ") +
                                c10::toString(type) +
                                " (supported: float16, bfloat16, float64)");
  }
}

}  // namespace

batch_size_choice resolve_batch_size(const model_definition& d, const child_settings& o,
                                     const suite_config* config, bool training, bool cpu) {
  long long model_default = d.default_eval_batch_size;
  if (training) {
    if (!d.default_train_batch_size)
      throw std::invalid_argument(d.name + " is eval-only: it has no train batch size");
    model_default = *d.default_train_batch_size;
  } else if (cpu && d.default_cpu_eval_batch_size) {
    model_default = *d.default_cpu_eval_batch_size;
  }
  const std::optional<long long> yaml =
      config ? config->batch_size(d.name, training ? "train" : "eval") : std::nullopt;

  batch_size_choice choice{model_default, std::nullopt};
  const bool fixed = !d.allow_customize_batch_size;
  if (fixed || (config && config->dont_change_batch_size(d.name))) {
    const std::string why = fixed ? d.name + " does not allow changing its batch size"
                                  : d.name + " is in dont_change_batch_size";
    if (o.batch_size)
      choice.ignored = "--batch-size=" + std::to_string(*o.batch_size) + " ignored: " + why;
    else if (yaml)
      choice.ignored = "batch_size." + yaml_test_key(training ? "train" : "eval") + "." + d.name +
                       " = " + std::to_string(*yaml) + " ignored: " + why;
    return choice;
  }
  if (o.batch_size) choice.batch_size = *o.batch_size;
  else if (yaml) choice.batch_size = *yaml;
  return choice;
}

void convert_floating_point_state(torch::nn::Module& module, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  for (auto& parameter : module.parameters())
    if (parameter.is_floating_point()) parameter.set_data(parameter.to(dtype));
  for (auto& buffer : module.buffers())
    if (buffer.is_floating_point()) buffer.set_data(buffer.to(dtype));
}

void apply_matmul_precision(const child_settings& o) {
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

prepared_model prepare_model(const model_definition& definition, const child_settings& o,
                             const suite_config* config, const experiment_config& experiment,
                             std::optional<torch::ScalarType> force_dtype) {
  const bool training = experiment.test == "train";
  if (training && !definition.default_train_batch_size)
    throw model_unavailable(definition.name +
                            " is eval-only in TorchBench (no DEFAULT_TRAIN_BSIZE): test=train is "
                            "not supported");
  const torch::Device device = experiment.accelerator == "cuda" ? torch::kCUDA : torch::kCPU;
  if (device.is_cuda() && !torch::cuda::is_available())
    throw std::runtime_error("accelerator=cuda but LibTorch sees no CUDA device");

  // §7.3 (suites/precision_rule.hpp): AMP on CUDA for training and force_amp models; inference
  // without AMP in bfloat16 (float16 for force_fp16 models); training keeps float32. A --precision
  // other than auto replaces the rule.
  precision_request request;
  request.training = training;
  request.cuda = device.is_cuda();
  request.force_amp = config && config->force_amp(definition.name);
  request.force_fp16 = config && config->force_fp16(definition.name);
  request.requested = experiment.precision;
  if (force_dtype) request.forced = cast_dtype_of(*force_dtype);
  const precision_plan plan = choose_precision(request);
  const bool use_amp = plan.use_amp;
  std::optional<torch::ScalarType> conversion;
  if (plan.cast) conversion = scalar_type_of(*plan.cast);

  const batch_size_choice batch =
      resolve_batch_size(definition, o, config, training, device.is_cpu());
  if (batch.ignored) log_warning(*batch.ignored);
  model_build_options build;
  build.batch_size = batch.batch_size;
  build.device = device;
  build.training = training;
  build.dtype = conversion;
  build.cache_dir = o.cache_dir;
  build.graph_capture = experiment.dynamo.has_value() || experiment.torch_xla2.has_value();
  const backend_descriptor* backend = find_backend(experiment);
  build.exported_program = !training && backend && backend->compiles_exported_programs &&
                           inductor_program_choice() == inductor_program::exported;
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
  step.amp_dtype = scalar_type_of(plan.amp_dtype);
  step.device = device;
  step.optimizer = train_optimizer(definition.name, config);
  step.collect_full_output = o.collect_full_output;
  prepared.precision = plan;
  return prepared;
}

}  // namespace benchmatrix
