// Tensor-wise maps over model inputs and outputs, which are IValues nesting tensors in lists,
// tuples and dicts (TorchBench models take and return such structures).
#pragma once

#include <torch/torch.h>

#include <functional>

namespace benchmatrix {

/// A copy of `value` with every tensor replaced by fn(tensor); non-tensors are kept.
[[nodiscard]] c10::IValue map_tensors(const c10::IValue& value,
                                      const std::function<torch::Tensor(const torch::Tensor&)>& fn);

/// Calls fn on every tensor of `value`.
void for_each_tensor(const c10::IValue& value, const std::function<void(const torch::Tensor&)>& fn);

}  // namespace benchmatrix
