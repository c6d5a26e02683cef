// dynamo=cudagraphs: the eager step captured once in a CUDA graph and replayed (CUDA only).
// Eval captures the forward. Train captures forward, loss and backward — gradients land in static
// tensors — and runs the optimizer step eagerly after each replay, as dynamo's cudagraphs backend
// does (LibTorch's Adam keeps its step count on the host, so a captured Adam step would replay a
// frozen bias correction).
#pragma once

#include "backends/backend.hpp"

namespace benchmatrix {

/// Throws backend_unsupported when the step cannot be captured (the record says why).
[[nodiscard]] backend_step make_cudagraphs_step(model_instance& model, const step_options& options);

}  // namespace benchmatrix
