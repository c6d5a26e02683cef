#include "torch_support/multi_tensor_optimizer.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>
#include <stdexcept>
#include <utility>

namespace benchmatrix {
namespace {

// torch.optim.Adam's defaults.
constexpr double adam_beta1 = 0.9;
constexpr double adam_beta2 = 0.999;
constexpr double adam_eps = 1e-8;

/// Indices of the parameters with a gradient, grouped by (device, dtype) in order of first
/// appearance, as Optimizer._group_tensors_by_device_and_dtype groups them: one foreach call per
/// group, since a multi-tensor kernel takes tensors of one device and dtype.
std::vector<std::vector<size_t>> group_by_device_and_dtype(const std::vector<at::Tensor>& params) {
  std::vector<std::pair<std::pair<c10::Device, at::ScalarType>, std::vector<size_t>>> groups;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].grad().defined()) continue;
    const std::pair<c10::Device, at::ScalarType> key{params[i].device(), params[i].scalar_type()};
    auto found = groups.begin();
    while (found != groups.end() && found->first != key) ++found;
    if (found == groups.end()) {
      groups.push_back({key, {}});
      found = std::prev(groups.end());
    }
    found->second.push_back(i);
  }
  std::vector<std::vector<size_t>> result;
  for (auto& group : groups) result.push_back(std::move(group.second));
  return result;
}

}  // namespace

multi_tensor_optimizer::multi_tensor_optimizer(std::vector<at::Tensor> parameters,
                                               optimizer_settings settings)
    : m_parameters(std::move(parameters)), m_adam_states(m_parameters.size()),
      m_settings(settings) {
  for (const auto& p : m_parameters)
    if (!p.defined()) throw std::invalid_argument("multi_tensor_optimizer: undefined parameter");
}

void multi_tensor_optimizer::zero_grad() {
  for (auto& p : m_parameters) p.mutable_grad() = at::Tensor();
}

const char* optimizer_algorithm_name(optimizer_algorithm algorithm) {
  switch (algorithm) {
    case optimizer_algorithm::adam: return "adam";
    case optimizer_algorithm::sgd: return "sgd";
    case optimizer_algorithm::none: return "none";
  }
  return "unknown";
}

void multi_tensor_optimizer::step() {
  if (m_settings.algorithm == optimizer_algorithm::none) return;
  at::NoGradGuard no_grad;  // as Optimizer.step (_use_grad_for_differentiable: torch.no_grad)
  for (const auto& group : group_by_device_and_dtype(m_parameters)) {
    if (m_settings.algorithm == optimizer_algorithm::adam)
      adam_step(group);
    else
      sgd_step(group);
  }
}

void multi_tensor_optimizer::reset_state() {
  at::NoGradGuard no_grad;
  for (auto& state : m_adam_states) {
    if (!state.exp_avg.defined()) continue;
    state.exp_avg.zero_();
    state.exp_avg_sq.zero_();
    if (state.step_on_device.defined()) state.step_on_device.zero_();
    state.step = 0;
  }
}

// _multi_tensor_adam of torch/optim/adam.py (amsgrad, maximize, weight_decay off; real tensors),
// or with capturable set, its _fused_adam.
void multi_tensor_optimizer::adam_step(const std::vector<size_t>& group) {
  const bool capturable = m_settings.capturable;
  const double lr = m_settings.lr;
  std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
  for (size_t i : group) {
    const at::Tensor& p = m_parameters[i];
    if (p.grad().is_sparse())  // Adam._init_group's own error
      throw std::invalid_argument(
          "Adam does not support sparse gradients, please consider SparseAdam instead");
    adam_state& state = m_adam_states[i];
    if (!state.exp_avg.defined()) {  // lazy state initialization (Adam._init_group)
      state.exp_avg = at::zeros_like(p, at::MemoryFormat::Preserve);
      state.exp_avg_sq = at::zeros_like(p, at::MemoryFormat::Preserve);
      if (capturable)  // fused: float32 on the parameter's device (_get_scalar_dtype(is_fused))
        state.step_on_device = at::zeros({}, p.options().dtype(at::kFloat));
    }
    params.push_back(p);
    grads.push_back(p.grad());
    exp_avgs.push_back(state.exp_avg);
    exp_avg_sqs.push_back(state.exp_avg_sq);
    if (capturable) steps.push_back(state.step_on_device);
  }
  if (capturable) {
    at::_foreach_add_(steps, 1);
    at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr,
                     adam_beta1, adam_beta2, /*weight_decay=*/0.0, adam_eps, /*amsgrad=*/false,
                     /*maximize=*/false);
    return;
  }
  for (size_t i : group) ++m_adam_states[i].step;
  at::_foreach_lerp_(exp_avgs, grads, 1 - adam_beta1);
  at::_foreach_mul_(exp_avg_sqs, adam_beta2);
  at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - adam_beta2);
  grads.clear();
  // Host bias corrections in double, as Python's floats: beta ** step, (lr / bc) * -1, bc ** 0.5.
  std::vector<c10::Scalar> step_size, bias_correction2_sqrt;
  for (size_t i : group) {
    const auto t = static_cast<double>(m_adam_states[i].step);
    step_size.emplace_back((lr / (1 - std::pow(adam_beta1, t))) * -1);
    bias_correction2_sqrt.emplace_back(std::pow(1 - std::pow(adam_beta2, t), 0.5));
  }
  std::vector<at::Tensor> denom = at::_foreach_sqrt(exp_avg_sqs);
  at::_foreach_div_(denom, bias_correction2_sqrt);
  at::_foreach_add_(denom, adam_eps);
  at::_foreach_addcdiv_(params, exp_avgs, denom, step_size);
}

// _multi_tensor_sgd of torch/optim/sgd.py (momentum, weight_decay, maximize off). A group with a
// sparse gradient (dlrm's embedding tables) is stepped tensor by tensor, as Python's
// device_has_sparse_grad branch does: the multi-tensor kernels take dense tensors only.
void multi_tensor_optimizer::sgd_step(const std::vector<size_t>& group) {
  std::vector<at::Tensor> params, grads;
  bool has_sparse_grad = false;
  for (size_t i : group) {
    params.push_back(m_parameters[i]);
    grads.push_back(m_parameters[i].grad());
    has_sparse_grad |= grads.back().is_sparse();
  }
  if (!has_sparse_grad) {
    at::_foreach_add_(params, grads, -m_settings.lr);
    return;
  }
  for (size_t i = 0; i < params.size(); ++i) params[i].add_(grads[i], -m_settings.lr);
}

}  // namespace benchmatrix
