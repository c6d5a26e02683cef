// Untimed warm-up runs of a backend's forward, as part of its compile/capture phase.
#pragma once

#include "backends/backend.hpp"

namespace benchmatrix {

/// Runs `forward` `iterations` times on the model's example inputs — eval under no_grad; train as
/// forward, loss and backward without an optimizer step — and then undoes every effect a step
/// would leave: gradients are cleared (set to None), buffers and RNG states restored. The model's
/// parameters and the experiment's later results are therefore exactly as without warm-up.
void warm_up(model_instance& model, const forward_function& forward, const step_options& options,
             int iterations);

}  // namespace benchmatrix
