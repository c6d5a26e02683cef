#include "backends/backend.hpp"

#include "backends/ivalue_tensors.hpp"

#include <ATen/autocast_mode.h>

#include <array>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// Enables float16 autocast on one device type for its lifetime, like `torch.autocast`.
class autocast_scope {
public:
  autocast_scope(c10::DeviceType device, bool enabled) : m_device(device), m_enabled(enabled) {
    if (!m_enabled) return;
    m_previous = at::autocast::is_autocast_enabled(m_device);
    at::autocast::set_autocast_enabled(m_device, true);
    at::autocast::set_autocast_dtype(m_device, at::kHalf);
    at::autocast::increment_nesting();
  }
  ~autocast_scope() {
    if (!m_enabled) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(m_device, m_previous);
  }
  autocast_scope(const autocast_scope&) = delete;  // restores the autocast state exactly once
  autocast_scope& operator=(const autocast_scope&) = delete;

private:
  c10::DeviceType m_device;
  bool m_enabled;
  bool m_previous = false;
};

}  // namespace

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

bool trains_with_sgd(const std::string& model_name) {
  // TRAIN_WITH_SGD of PyTorch/XLA's torchbench_model.py (xla_runner.md §7.2).
  static const std::array<const char*, 25> sgd_models = {
      "BERT_pytorch", "LearningToPaint", "alexnet", "dcgan", "demucs", "densenet121", "dlrm",
      "fastNLP_Bert", "mobilenet_v2", "phlippe_densenet", "phlippe_resnet", "pytorch_stargan",
      "resnet18", "shufflenet_v2_x1_0", "speech_transformer", "squeezenet1_1",
      "stable_diffusion_text_encoder", "timm_efficientdet", "timm_nfnet", "timm_regnet",
      "timm_vision_transformer", "timm_vovnet", "vgg16", "hf_T5", "llama_v2_7b_16h"};
  for (const char* name : sgd_models)
    if (model_name == name) return true;
  return false;
}

step_function make_eager_step(model_instance& model, const step_options& options) {
  const auto device_type = options.device.type();
  const bool amp = options.use_amp;
  if (!options.training) {
    model.module->eval();
    return [&model, device_type, amp](const model_inputs& inputs) {
      autocast_scope autocast(device_type, amp);
      return model.forward(inputs);
    };
  }
  model.module->train();
  std::shared_ptr<torch::optim::Optimizer> optimizer;
  const auto parameters = model.module->parameters();
  if (options.use_sgd)
    optimizer = std::make_shared<torch::optim::SGD>(parameters, torch::optim::SGDOptions(0.01));
  else
    optimizer = std::make_shared<torch::optim::Adam>(parameters, torch::optim::AdamOptions(0.01));
  const bool collect = options.collect_full_output;
  return [&model, optimizer, device_type, amp, collect](const model_inputs& inputs) -> c10::IValue {
    optimizer->zero_grad(/*set_to_none=*/true);
    c10::IValue prediction;
    torch::Tensor loss;
    {
      autocast_scope autocast(device_type, amp);
      prediction = model.forward(inputs);
      loss = reduce_to_scalar_loss(prediction);
    }
    loss.backward();
    optimizer->step();
    if (!collect) return c10::IValue();
    c10::Dict<std::string, torch::Tensor> gradients;
    c10::Dict<std::string, torch::Tensor> parameters;
    for (const auto& item : model.module->named_parameters()) {
      const auto& p = item.value();
      gradients.insert(item.key() + ".grad", p.grad().defined() ? p.grad() : torch::zeros_like(p));
      parameters.insert(item.key(), p.detach());
    }
    return c10::ivalue::Tuple::create({prediction, loss, gradients, parameters});
  };
}

}  // namespace benchmatrix
