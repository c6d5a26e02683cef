// The whole train step in one CUDA graph, as torch.compile(mode="reduce-overhead") of a step:
// zero_grad, what computes the loss and the gradients, and a capture-safe optimizer step, captured
// once and replayed. Shared by the cudagraphs backend (eager forward + backward) and the inductor
// train step (the compiled joint package), which differ only in that middle part.
#pragma once

#include "backends/backend.hpp"

#include <functional>
#include <utility>
#include <vector>

namespace benchmatrix {

/// One step's middle part on the input tensors (the leaves of model.example_inputs' structure):
/// returns (prediction, loss) with every parameter's gradient written (set to None before it).
using loss_and_gradients_function =
    std::function<std::pair<c10::IValue, torch::Tensor>(const std::vector<torch::Tensor>& leaves)>;

/// Captures zero_grad (to None: the captured middle allocates the gradients in the graph's pool,
/// where every replay rewrites them), `loss_and_gradients` and the optimizer step (Adam fused, its
/// state and step counter on the device, created by the first warm-up step) after `warm_ups`
/// uncaptured calls. The warm-ups' updates are undone before the capture, so the first replay is
/// the first step. Throws std::runtime_error when the step cannot be captured; the parameters,
/// buffers, generators and optimizer are then as before. The model must outlive the returned
/// function, which returns full_train_output when options.collect_full_output, else nothing.
[[nodiscard]] step_function capture_whole_train_step(model_instance& model,
                                                     const step_options& options,
                                                     loss_and_gradients_function loss_and_gradients,
                                                     int warm_ups);

}  // namespace benchmatrix
