// dynamo=inductor for test=train: the whole train step's forward and backward compiled by
// AOTInductor as one package, the optimizer eager's.
//
// The forward is traced with the parameters (deduplicated by identity: tied weights are one input)
// and buffers as graph inputs (traced_graph.hpp, trace_train_forward); the compile helper
// (python/benchmatrix_compile/train_step.py) builds the joint forward+backward graph with
// AOTAutograd and compiles it into one package that returns (loss, prediction, gradients, updated
// buffers). Per step the child calls it with the current parameters, buffers and inputs, writes
// the gradients into the parameters' .grad, copies the updated buffers back (BatchNorm statistics)
// and runs the optimizer of eager's step (backend.hpp make_optimizer). On CUDA the package call and
// the optimizer step are captured in one CUDA graph, as the cudagraphs backend's train step; where
// that capture fails, they run uncaptured and compile.capture_fallback says why.
#pragma once

#include "backends/backend.hpp"

namespace benchmatrix {

/// Throws backend_unsupported naming the model and the reason for a forward the tracer or the
/// export cannot turn into a train step (e.g. data-dependent shapes).
[[nodiscard]] backend_step make_inductor_train_step(model_instance& model,
                                                    const step_options& options,
                                                    const backend_context& context);

}  // namespace benchmatrix
