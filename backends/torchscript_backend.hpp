// dynamo=torchscript: the forward traced with LibTorch's tracer; eval runs it frozen and optimised
// for inference (torch.jit.freeze + optimize_for_inference), train runs the graph with autograd
// (parameters as graph inputs) inside the usual train step.
#pragma once

#include "backends/backend.hpp"

namespace benchmatrix {

[[nodiscard]] backend_step make_torchscript_step(model_instance& model, const step_options& options);

}  // namespace benchmatrix
