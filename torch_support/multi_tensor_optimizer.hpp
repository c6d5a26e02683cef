// The optimizer of a train step as Python's torch.optim runs it by default: Adam and SGD through
// ATen's multi-tensor (_foreach_*) kernels, op for op as torch 2.11's _multi_tensor_adam and
// _multi_tensor_sgd, so that a step launches a few kernels per (device, dtype) group instead of
// several per parameter (LibTorch's torch::optim loops over parameters).
//
// Which implementation Python picks: torch.optim's _default_to_fused_or_foreach chooses foreach
// on CUDA (fused only when asked for) and the single-tensor loop on the CPU. The loop runs the
// same ATen ops per tensor that the CPU foreach fallback runs, so one code path serves every
// device with Python's numerics (tests/optimizer checks it bitwise against both, per dtype).
//
// Capturable mode, for a step inside a CUDA graph: Adam as torch.optim.Adam(fused=True) — the
// step counter a float32 device tensor, incremented by _foreach_add_ and read by ATen's
// _fused_adam_ kernel, which computes the bias corrections on the device: no host value, one
// multi-tensor kernel per group. Python's other capture-safe choice, foreach with
// capturable=True, divides by per-parameter 0-dim bias-correction tensors, which ATen's
// multi-tensor fast path (equal shapes only) sends down its per-tensor slow path: a kernel per
// parameter and division (~2 x 161 for resnet50), for the same result within rounding. The cost:
// fused numerics differ from foreach by float rounding (bitwise in float32/float64 on the CPU,
// an ulp in float16/bfloat16). SGD without momentum keeps no state and is capture-safe as it is.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace benchmatrix {

/// A train step's optimizer. `none` updates nothing (step() returns at once): PyTorch's harness
/// creates no optimizer for the models of its CI_SKIP_OPTIMIZER, so only gradients change.
enum class optimizer_algorithm { adam, sgd, none };

/// "adam", "sgd" or "none".
[[nodiscard]] const char* optimizer_algorithm_name(optimizer_algorithm algorithm);

struct optimizer_settings {
  optimizer_algorithm algorithm = optimizer_algorithm::adam;
  double lr = 0.01;  // the original runner's learning rate for both (xla_runner.md §7.2)
  bool capturable = false;  // see the file comment: Adam fused, its step counter on the device
};

/// Adam (betas 0.9/0.999, eps 1e-8, no weight decay, no amsgrad: torch.optim.Adam's defaults) or
/// SGD (no momentum, dampening or weight decay: torch.optim.SGD's defaults) over a fixed list of
/// parameters. A parameter without a gradient is skipped (no update, no state), as Python skips it.
class multi_tensor_optimizer {
public:
  multi_tensor_optimizer(std::vector<at::Tensor> parameters, optimizer_settings settings);

  /// Sets every gradient to None (Optimizer.zero_grad's default set_to_none=True): the next
  /// backward allocates it afresh.
  void zero_grad();

  /// One update from the parameters' current gradients; Adam's state is created lazily here, on
  /// a parameter's first step with a gradient (as Adam._init_group).
  void step();

  /// Back to the state of a freshly constructed optimizer without freeing anything: Adam's
  /// moments and step counters are zeroed in place (a captured CUDA graph keeps their
  /// addresses), host step counts reset. Equivalent to a fresh optimizer for the next step.
  void reset_state();

  [[nodiscard]] const optimizer_settings& settings() const { return m_settings; }

private:
  struct adam_state {
    at::Tensor exp_avg;
    at::Tensor exp_avg_sq;
    at::Tensor step_on_device;  // capturable: the step count, 0-dim float32, on the device
    int64_t step = 0;           // otherwise: the count on the host (Python: a CPU tensor)
  };
  void adam_step(const std::vector<size_t>& group);
  void sgd_step(const std::vector<size_t>& group);

  std::vector<at::Tensor> m_parameters;
  std::vector<adam_state> m_adam_states;  // one per parameter; empty tensors until its first step
  optimizer_settings m_settings;
};

}  // namespace benchmatrix
