// The casts autocast makes inside a recurrent op, written into a traced graph.
#pragma once

#include <torch/csrc/jit/ir/ir.h>

namespace benchmatrix {

/// Under autocast the tracer records aten::lstm (gru, rnn_tanh, rnn_relu) with float32 weights
/// and initial state (and a float32 input for the first layer) but a float16 or bfloat16 output:
/// autocast casts inside the op (the inner linear layers on the CPU, _cudnn_rnn on CUDA), below
/// what the tracer records. A compiler re-executes that graph without autocast, so the op runs in
/// float32, or fails on its mixed dtypes (TorchBench's tts_angular under force_amp: Inductor's
/// pad_mm benchmark raised "expected scalar type Float but found Half" on the H100; on the CPU the
/// compiled output came out float32 where eager's is float16, 2026-12-07). For each such node this
/// inserts the casts of its float32 input, state and weights to the output's dtype, so the graph
/// says what ran. Needs the tracer's tensor types (call it right after tracing). Returns how many
/// nodes it rewrote.
int cast_recurrent_ops_as_autocast_ran(torch::jit::Graph& graph);

}  // namespace benchmatrix
