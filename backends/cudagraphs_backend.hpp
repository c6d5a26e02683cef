// dynamo=cudagraphs: the eager step captured once in a CUDA graph and replayed (CUDA only).
// Eval captures the forward. Train captures the whole step — zero_grad, forward, loss, backward
// and the optimizer step in its capture-safe form (Adam fused, its step counter and bias
// corrections on the device: torch_support/multi_tensor_optimizer) — so that a replay is one
// step, as torch.compile(mode="reduce-overhead") of a step.
// Where the whole step cannot be captured, it captures forward, loss and backward and runs the
// optimizer eagerly after each replay (as dynamo's cudagraphs backend does); the record's
// compile.capture_fallback says why.
#pragma once

#include "backends/backend.hpp"

namespace benchmatrix {

/// Throws backend_unsupported when the step cannot be captured (the record says why).
[[nodiscard]] backend_step make_cudagraphs_step(model_instance& model, const step_options& options);

}  // namespace benchmatrix
