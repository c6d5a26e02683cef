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

/// The tensors of `values`, in map_tensors order (how compiled graphs take and return them).
[[nodiscard]] std::vector<torch::Tensor> tensor_leaves(const std::vector<c10::IValue>& values);

/// `values` with their tensors replaced, in order, by `leaves`. Throws std::invalid_argument unless
/// there are exactly as many leaves as `values` has tensors.
[[nodiscard]] std::vector<c10::IValue> with_tensor_leaves(const std::vector<c10::IValue>& values,
                                                          const std::vector<torch::Tensor>& leaves);

/// `value`'s nesting with each tensor replaced by an empty tensor of its dtype and device: what a
/// compiled path keeps of a model's example output to put its flat outputs back in that nesting.
/// The example output's own tensors would stay alive for the whole run, and with autograd on
/// their graph too, with every activation the forward saved for backward (resnet50's inductor
/// train step at batch 32 on the H100, 2026-12-07: 1.6 GB beside the CUDA graph capture's own,
/// a capture peak of 3260 MB against cudagraphs' 1866).
[[nodiscard]] c10::IValue with_placeholder_leaves(const c10::IValue& value);

}  // namespace benchmatrix
