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
#include "backends/traced_graph.hpp"

namespace benchmatrix {

/// Throws backend_unsupported naming the model and the reason for a forward the tracer or the
/// export cannot turn into a train step (e.g. data-dependent shapes).
[[nodiscard]] backend_step make_inductor_train_step(model_instance& model,
                                                    const step_options& options,
                                                    const backend_context& context);

/// What the joint train step takes and how its loss nests, as this backend gives them to the
/// compile helper (the openxla train step exports the same graph: xla_pjrt_backend.cpp).
struct train_step_inputs {
  std::vector<torch::Tensor> parameters;  // each tensor once (tied weights are one input)
  std::vector<torch::Tensor> buffers;
  std::string loss_structure;  // the output's nesting, the helper's --loss-structure
};

/// The parameters and buffers of `model` in the order of trace_train_forward's state, traced with
/// the module in options.module_mode (train for every timed step); throws backend_unsupported naming
/// the model when `dynamo` (e.g. "dynamo=openxla") cannot trace its train step. Returns the traced
/// forward in `traced`.
[[nodiscard]] train_step_inputs trace_joint_train_step(model_instance& model,
                                                       const step_options& options,
                                                       const std::string& model_name,
                                                       const std::string& dynamo,
                                                       traced_forward& traced);

/// `tensors` (moved to the CPU) pickled as a tuple, the compile helper's --inputs and --state.
[[nodiscard]] std::string pickled_tensors(const std::vector<torch::Tensor>& tensors);

}  // namespace benchmatrix
