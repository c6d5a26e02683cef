// Undoing what untimed runs of a model (tracing, warm-up, CUDA graph capture) change besides its
// parameters, so that the experiment's timed and verified steps start where eager's would.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace benchmatrix {

/// Snapshot of everything a forward may change besides parameters: the CPU and CUDA default
/// generators' states and the module's buffers. Restored on destruction.
class forward_side_effects_guard {
public:
  explicit forward_side_effects_guard(torch::nn::Module& module);
  ~forward_side_effects_guard();
  forward_side_effects_guard(const forward_side_effects_guard&) = delete;  // restores once
  forward_side_effects_guard& operator=(const forward_side_effects_guard&) = delete;

private:
  torch::nn::Module& m_module;
  std::vector<torch::Tensor> m_buffers;
  torch::Tensor m_cpu_rng;
  std::vector<torch::Tensor> m_cuda_rng;  // one per visible device
};

}  // namespace benchmatrix
