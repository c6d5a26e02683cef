// A model's forward traced with LibTorch's tracer into a TorchScript graph, the common front end of
// the torchscript and inductor backends.
//
// The graph takes the tensor leaves of the model inputs (tensor_leaves order; non-tensor inputs such
// as llama's start_pos are baked in, as torch.jit.trace does) and, for training, the parameters;
// it returns one tuple of the output's tensor leaves. `unflatten` puts them back into the model's
// output structure, so losses and the verifier see what eager returns.
#pragma once

#include "backends/backend.hpp"
#include "backends/forward_side_effects.hpp"
#include "suites/model.hpp"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <filesystem>
#include <memory>

namespace benchmatrix {

struct traced_forward {
  std::shared_ptr<torch::jit::Graph> graph;
  c10::IValue output_structure;  // the example output's nesting; its tensors are empty placeholders
  size_t input_leaf_count = 0;   // graph inputs before the parameters
  bool parameters_are_inputs = false;

  /// The model's output structure holding `leaves` (the graph's tuple elements, in order).
  [[nodiscard]] c10::IValue unflatten(const std::vector<torch::Tensor>& leaves) const;
};

/// Eval: traces one forward on the model's example inputs, under autocast when options.use_amp (the
/// graph then holds the casts). With `settle_first`, after one untraced forward that settles state
/// a model changes on its first call (llama's KV-cache re-cast), so the graph holds the
/// steady-state step: for TorchScript, which runs the graph as traced. Not for torch.export-based
/// backends (inductor, XLA): the settled graph writes into a constant (llama's cache), which
/// export's functionalization refuses, while the first-call graph writes into the re-cast's fresh
/// result, and Inductor's freezing folds that re-cast of a constant away. The parameters stop
/// requiring grad and become graph constants (the tracer's rule for inference; a train step's
/// graph takes them as inputs: trace_train_forward). The tracing run leaves no trace: RNG states
/// and buffers (BatchNorm statistics) are restored.
/// Throws std::runtime_error (with the tracer's message) for a forward the tracer cannot record, or
/// one the model says it cannot (model_instance::untraceable_because).
[[nodiscard]] traced_forward trace_forward(model_instance& model, const step_options& options,
                                           bool settle_first = false);

/// Train, with the state as graph inputs (inductor's train step, which differentiates the graph
/// itself; the torchscript backend's, which runs it under autograd): the graph inputs are the
/// model inputs' leaves, then `state` (the parameters, then the buffers), traced with autograd on
/// and under autocast when options.use_amp; buffers the forward updates in place (BatchNorm's
/// statistics, and its num_batches_tracked, whose `+= 1` on a graph constant the tracer's graph
/// would drop as dead code) are updated in place in the graph. `settle_first` as trace_forward's.
/// The tracing run leaves no trace, as trace_forward's.
[[nodiscard]] traced_forward trace_train_forward(model_instance& model,
                                                 const std::vector<torch::Tensor>& state,
                                                 const step_options& options,
                                                 bool settle_first = false);

/// A SHA-256 hex digest of the tensors' dtypes, shapes, strides, layouts, device types and values
/// (as graph_digest hashes a constant), in order: a cache key part for tensors without
/// serializing them.
[[nodiscard]] std::string tensors_digest(const std::vector<torch::Tensor>& tensors);

/// A SHA-256 hex digest of everything the graph computes: its IR text (operators, attributes,
/// value names; tensor constants print as <Tensor>) and each tensor constant's dtype, shape,
/// strides and bytes (copied to the CPU; large ones hashed in 16 MiB chunks on as many threads
/// as the intra-op pool has, then the chunks' digests hashed). Equal for equal graphs across
/// processes: the compile cache key of a package built from the graph, without serializing it
/// as TorchScript.
[[nodiscard]] std::string graph_digest(const torch::jit::Graph& graph);

/// A script module whose forward(self, *leaves) is the traced graph: savable with save(), loadable
/// by torch.jit.load in Python (the inductor compile helper's input).
[[nodiscard]] torch::jit::Module to_script_module(const traced_forward& traced);

}  // namespace benchmatrix
