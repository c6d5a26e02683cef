// dynamo=torchscript: the forward traced with LibTorch's tracer; eval runs it frozen and optimised
// for inference (torch.jit.freeze + optimize_for_inference), train runs the graph with autograd
// (parameters as graph inputs) inside the usual train step. The graph executor runs without the
// TensorExpr (NNC) fuser: on CUDA it deadlocks on densenet121's graph (the second call never
// returns, 0% CPU; pytorch/pytorch#32751, open since 2020, TorchScript deprecated as of 2.11), and
// a backend that hangs one model in a sweep costs a --subprocess-timeout each run. On the CPU the
// fuser is off by default anyway, so only CUDA timings change.
#pragma once

#include "backends/backend.hpp"

namespace benchmatrix {

[[nodiscard]] backend_step make_torchscript_step(model_instance& model, const step_options& options);

}  // namespace benchmatrix
