#include "backends/traced_graph.hpp"

#include "backends/recurrent_autocast.hpp"
#include "core/content_hash.hpp"
#include "torch_support/autocast_scope.hpp"
#include "torch_support/ivalue_tensors.hpp"

#include <ATen/Parallel.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/serialize.h>

#include <algorithm>
#include <atomic>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace benchmatrix {

c10::IValue traced_forward::unflatten(const std::vector<torch::Tensor>& leaves) const {
  return with_tensor_leaves({output_structure}, leaves).front();
}

namespace {

/// The tracing of trace_forward and trace_train_forward: graph inputs are the model inputs' tensor
/// leaves, then `state`; the forward runs with autograd on where `with_grad`.
traced_forward trace_with_state(model_instance& model, const std::vector<torch::Tensor>& state,
                                bool with_grad, const step_options& options, bool settle_first) {
  if (!model.untraceable_because.empty())
    throw std::runtime_error("this backend traces the model's forward, but " +
                             model.untraceable_because);
  traced_forward traced;
  traced.parameters_are_inputs = !state.empty();
  const std::vector<torch::Tensor> input_leaves = tensor_leaves(model.example_inputs);
  traced.input_leaf_count = input_leaves.size();
  torch::jit::Stack inputs(input_leaves.begin(), input_leaves.end());
  inputs.insert(inputs.end(), state.begin(), state.end());

  forward_side_effects_guard restore(*model.module);
  if (settle_first) {
    // One untraced forward first, so that the graph records the model's steady state, as eager's
    // timed repeats see it after warm-up: a forward that settles lazy state on its first call
    // (llama re-casts its float32 KV cache to the activations' dtype and keeps the result) would
    // otherwise be traced with that first-call work frozen in, repeated on every call (llama under
    // TorchScript on the CPU: 134 MB of cache converted per layer per call, 23x slower than
    // eager). Buffers and generators are restored by the guard above.
    torch::NoGradGuard settle_without_grad;
    autocast_scope autocast(options.device.type(), options.use_amp, options.amp_dtype);
    (void)model.forward(model.example_inputs);
  }
  std::optional<torch::NoGradGuard> no_grad;
  if (!with_grad) no_grad.emplace();
  const size_t leaf_count = input_leaves.size();
  try {
    auto [tracing_state, outputs] = torch::jit::tracer::trace(
        std::move(inputs),
        [&](torch::jit::Stack traced_inputs) -> torch::jit::Stack {
          std::vector<torch::Tensor> leaves;
          for (size_t i = 0; i < leaf_count; ++i) leaves.push_back(traced_inputs[i].toTensor());
          autocast_scope autocast(options.device.type(), options.use_amp, options.amp_dtype);
          const c10::IValue output = model.forward(with_tensor_leaves(model.example_inputs, leaves));
          traced.output_structure = output;
          const auto output_leaves = tensor_leaves({output});
          if (output_leaves.empty())
            throw std::runtime_error("the forward returned no tensor to trace");
          return {c10::ivalue::Tuple::create(
              std::vector<c10::IValue>(output_leaves.begin(), output_leaves.end()))};
        },
        [](const torch::autograd::Variable&) { return std::string(); },
        /*strict=*/false);
    traced.graph = tracing_state->graph;
    if (options.use_amp) cast_recurrent_ops_as_autocast_ran(*traced.graph);
    traced.output_structure = with_placeholder_leaves(traced.output_structure);
  } catch (const c10::Error& e) {
    throw std::runtime_error(std::string("tracing the forward failed: ") +
                             e.what_without_backtrace());
  }
  return traced;
}

}  // namespace

traced_forward trace_forward(model_instance& model, const step_options& options,
                             bool settle_first) {
  // constants may not require grad
  for (auto p : model.module->parameters()) p.requires_grad_(false);
  return trace_with_state(model, {}, /*with_grad=*/false, options, settle_first);
}

traced_forward trace_train_forward(model_instance& model, const std::vector<torch::Tensor>& state,
                                   const step_options& options, bool settle_first) {
  return trace_with_state(model, state, /*with_grad=*/true, options, settle_first);
}

torch::jit::Module to_script_module(const traced_forward& traced) {
  torch::jit::Module module("__torch__.benchmatrix.TracedForward");
  auto graph = traced.graph->copy();
  graph->insertInput(0, "self")->setType(module._ivalue()->type());
  auto unit = module._ivalue()->compilation_unit();
  auto* function =
      unit->create_function(c10::QualifiedName(*module.type()->name(), "forward"), graph);
  module.type()->addMethod(function);
  module.eval();
  return module;
}

namespace {

constexpr int64_t digest_chunk_bytes = 16 << 20;  // 16 MiB: chunks hashed in parallel

/// The digest of a tensor's values (as laid out contiguously on the CPU).
std::string tensor_digest(const torch::Tensor& tensor) {
  if (tensor.layout() != torch::kStrided) {  // sparse, mkldnn: their pickled form
    const auto bytes = torch::pickle_save(tensor.cpu());
    return sha256_hex(std::string_view(bytes.data(), bytes.size()));
  }
  const torch::Tensor values = tensor.detach().cpu().contiguous();
  const auto* data = static_cast<const char*>(values.data_ptr());
  const auto size = static_cast<int64_t>(values.nbytes());
  if (size <= digest_chunk_bytes) return sha256_hex(std::string_view(data, size));
  const int64_t chunks = (size + digest_chunk_bytes - 1) / digest_chunk_bytes;
  std::vector<std::string> digests(static_cast<size_t>(chunks));
  std::atomic<int64_t> next{0};
  const auto hash_chunks = [&] {
    for (int64_t i = next++; i < chunks; i = next++) {
      const int64_t offset = i * digest_chunk_bytes;
      digests[static_cast<size_t>(i)] = sha256_hex(
          std::string_view(data + offset, std::min(digest_chunk_bytes, size - offset)));
    }
  };
  // As many threads as the intra-op pool has (OMP_NUM_THREADS, else the CPUs), this one included:
  // std::thread, since at::parallel_for's OpenMP loop runs serially in code built without
  // -fopenmp, as ours is (measured: 1 GB took 0.62 s with it on 1 or 2 threads, 0.35 s so on 2).
  const int64_t helpers = std::min<int64_t>(at::get_num_threads(), chunks) - 1;
  std::vector<std::thread> threads;
  for (int64_t t = 0; t < helpers; ++t) threads.emplace_back(hash_chunks);
  hash_chunks();
  for (auto& thread : threads) thread.join();
  sha256_hasher combined;
  for (const auto& digest : digests) combined.add(digest);
  return combined.hex();
}

void add_tensor(const torch::Tensor& tensor, sha256_hasher& hasher) {
  std::ostringstream layout;
  layout << tensor.scalar_type() << " " << tensor.sizes() << " " << tensor.strides() << " "
         << tensor.layout() << " " << tensor.device().type();
  hasher.add_field("constant", layout.str()).add_field("values", tensor_digest(tensor));
}

void add_constants(const torch::jit::Block& block, sha256_hasher& hasher) {
  for (const torch::jit::Node* node : block.nodes()) {
    if (node->kind() == c10::prim::Constant && node->hasAttribute(c10::attr::value) &&
        node->kindOf(c10::attr::value) == torch::jit::AttributeKind::t)
      add_tensor(node->t(c10::attr::value), hasher);
    for (const torch::jit::Block* inner : node->blocks()) add_constants(*inner, hasher);
  }
}

}  // namespace

std::string graph_digest(const torch::jit::Graph& graph) {
  sha256_hasher hasher;
  hasher.add_field("ir", graph.toString(/*print_source_locations=*/false));
  add_constants(*graph.block(), hasher);
  return hasher.hex();
}

std::string tensors_digest(const std::vector<torch::Tensor>& tensors) {
  sha256_hasher hasher;
  for (const auto& tensor : tensors) add_tensor(tensor, hasher);
  return hasher.hex();
}

}  // namespace benchmatrix
