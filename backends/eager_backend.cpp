#include "backends/backend.hpp"
#include "backends/backend_steps.hpp"

#include "torch_support/autocast_scope.hpp"
#include "torch_support/ivalue_tensors.hpp"

#include <array>
#include <stdexcept>

namespace benchmatrix {

torch::Tensor reduce_to_scalar_loss(const c10::IValue& output) {
  if (output.isTensor()) {
    const auto& t = output.toTensor();
    return t.sum() / t.numel();
  }
  std::vector<torch::Tensor> parts;
  if (output.isTensorList()) {
    for (const torch::Tensor& t : output.toTensorList()) parts.push_back(reduce_to_scalar_loss(t));
  } else if (output.isList()) {
    for (const auto& element : output.toList()) parts.push_back(reduce_to_scalar_loss(element));
  } else if (output.isTuple()) {
    for (const auto& element : output.toTupleRef().elements())
      parts.push_back(reduce_to_scalar_loss(element));
  } else if (output.isGenericDict()) {
    for (const auto& entry : output.toGenericDict())
      parts.push_back(reduce_to_scalar_loss(entry.value()));
  } else {
    throw std::invalid_argument("reduce_to_scalar_loss: cannot reduce a " +
                                output.tagKind() + " output to a loss");
  }
  if (parts.empty()) throw std::invalid_argument("reduce_to_scalar_loss: empty output");
  torch::Tensor sum = parts.front();
  for (size_t i = 1; i < parts.size(); ++i) sum = sum + parts[i];
  return sum / static_cast<double>(parts.size());
}

optimizer_algorithm train_optimizer(const std::string& model_name, const suite_config* config) {
  if (config && config->skips_optimizer(model_name)) return optimizer_algorithm::none;
  if (config && config->trains_with_sgd(model_name)) return optimizer_algorithm::sgd;
  // TRAIN_WITH_SGD of PyTorch/XLA's torchbench_model.py (xla_runner.md §7.2).
  static const std::array<const char*, 25> sgd_models = {
      "BERT_pytorch", "LearningToPaint", "alexnet", "dcgan", "demucs", "densenet121", "dlrm",
      "fastNLP_Bert", "mobilenet_v2", "phlippe_densenet", "phlippe_resnet", "pytorch_stargan",
      "resnet18", "shufflenet_v2_x1_0", "speech_transformer", "squeezenet1_1",
      "stable_diffusion_text_encoder", "timm_efficientdet", "timm_nfnet", "timm_regnet",
      "timm_vision_transformer", "timm_vovnet", "vgg16", "hf_T5", "llama_v2_7b_16h"};
  for (const char* name : sgd_models)
    if (model_name == name) return optimizer_algorithm::sgd;
  return optimizer_algorithm::adam;
}

step_function make_eval_step(forward_function forward, const step_options& options) {
  const auto device_type = options.device.type();
  const bool amp = options.use_amp;
  const torch::ScalarType amp_dtype = options.amp_dtype;
  return [forward = std::move(forward), device_type, amp, amp_dtype](const model_inputs& inputs) {
    autocast_scope autocast(device_type, amp, amp_dtype);
    return forward(inputs);
  };
}

std::shared_ptr<multi_tensor_optimizer> make_optimizer(model_instance& model,
                                                       const step_options& options,
                                                       bool capturable) {
  optimizer_settings settings;
  settings.algorithm = options.optimizer;
  settings.lr = 0.01;
  settings.capturable = capturable;
  return std::make_shared<multi_tensor_optimizer>(model.module->parameters(), settings);
}

std::pair<c10::IValue, torch::Tensor> forward_and_loss(const forward_function& forward,
                                                       const model_inputs& inputs,
                                                       const step_options& options) {
  autocast_scope autocast(options.device.type(), options.use_amp, options.amp_dtype);
  c10::IValue prediction = forward(inputs);
  torch::Tensor loss = reduce_to_scalar_loss(prediction);
  return {std::move(prediction), std::move(loss)};
}

c10::IValue full_train_output(model_instance& model, const c10::IValue& prediction,
                              const torch::Tensor& loss) {
  c10::Dict<std::string, torch::Tensor> gradients;
  c10::Dict<std::string, torch::Tensor> parameters;
  for (const auto& item : model.module->named_parameters()) {
    const auto& p = item.value();
    gradients.insert(item.key() + ".grad", p.grad().defined() ? p.grad() : torch::zeros_like(p));
    parameters.insert(item.key(), p.detach());
  }
  // The buffers after the step (BatchNorm's running statistics), as dynamo's collect_results
  // appends named_buffers: a compiled step that skipped or misplaced their update differs here.
  c10::Dict<std::string, torch::Tensor> buffers;
  for (const auto& item : model.module->named_buffers()) buffers.insert(item.key(), item.value());
  return c10::ivalue::Tuple::create({prediction, loss, gradients, parameters, buffers});
}

const char* train_module_mode_name(train_module_mode mode) {
  switch (mode) {
    case train_module_mode::train: return "train";
    case train_module_mode::dropout_off: return "dropout_off";
    case train_module_mode::eval: return "eval";
  }
  return "train";
}

void set_train_module_mode(torch::nn::Module& module, train_module_mode mode) {
  module.train(mode != train_module_mode::eval);
  if (mode != train_module_mode::dropout_off) return;
  for (const auto& child : module.modules(/*include_self=*/false))
    if (child->name().find("Dropout") != std::string::npos) child->eval();
}

step_function make_train_step(model_instance& model, forward_function forward,
                              const step_options& options) {
  set_train_module_mode(*model.module, options.module_mode);
  auto optimizer = make_optimizer(model, options);
  return [&model, optimizer, forward = std::move(forward), options](
             const model_inputs& inputs) -> c10::IValue {
    optimizer->zero_grad();  // set_to_none, as Python's default
    auto [prediction, loss] = forward_and_loss(forward, inputs, options);
    loss.backward();
    optimizer->step();
    if (!options.collect_full_output) return c10::IValue();
    return full_train_output(model, prediction, loss);
  };
}

step_function make_eager_step(model_instance& model, const step_options& options) {
  if (options.training) return make_train_step(model, model.forward, options);
  model.module->eval();
  return make_eval_step(model.forward, options);
}

// The step of backends/eager_descriptor.cpp.
const backend_step_registration eager_step{
    "eager", [](model_instance& model, const step_options& options, const backend_context&) {
      return backend_step{make_eager_step(model, options), {}};
    }};

}  // namespace benchmatrix
