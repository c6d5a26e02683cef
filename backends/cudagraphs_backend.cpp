#include "backends/backend_steps.hpp"
#include "backends/cudagraphs_backend.hpp"

#include "backends/captured_train_step.hpp"
#include "backends/cuda_graph_capture.hpp"
#include "backends/forward_side_effects.hpp"
#include "torch_support/device_sync.hpp"
#include "torch_support/ivalue_tensors.hpp"

#include <chrono>

namespace benchmatrix {
namespace {

constexpr int warm_up_calls = 3;  // torch.cuda.graphs' examples warm up 3 times on the side stream

struct replayed_step {
  std::unique_ptr<captured_graph> graph;
  /// The forward's output; its tensors are placeholders. Set by every call of the captured body,
  /// and cleared after the warm-ups: the last warm-up's output would otherwise live through the
  /// capture and count in its peak (backends/capture_memory.hpp), which eager's step never holds.
  c10::IValue output_structure;
};

step_function eval_step(model_instance& model, const step_options& options) {
  model.module->eval();
  auto state = std::make_shared<replayed_step>();
  const forward_function forward = make_eval_step(model.forward, options);
  const model_inputs& structure = model.example_inputs;
  forward_side_effects_guard restore(*model.module);
  state->graph = std::make_unique<captured_graph>(
      tensor_leaves(model.example_inputs),
      [&](const std::vector<torch::Tensor>& leaves) {
        torch::NoGradGuard no_grad;
        const c10::IValue output = forward(with_tensor_leaves(structure, leaves));
        state->output_structure = output;
        return tensor_leaves({output});
      },
      warm_up_calls, [&] { state->output_structure = c10::IValue(); });
  return [state](const model_inputs& inputs) -> c10::IValue {
    return with_tensor_leaves({state->output_structure}, state->graph->replay(tensor_leaves(inputs)))
        .front();
  };
}

/// The whole train step in one graph (backends/captured_train_step): eager's forward, loss and
/// backward between zero_grad and the optimizer step.
step_function whole_train_step(model_instance& model, const step_options& options) {
  const model_inputs& structure = model.example_inputs;
  return capture_whole_train_step(
      model, options,
      [&model, &structure, options](const std::vector<torch::Tensor>& leaves) {
        auto [prediction, loss] =
            forward_and_loss(model.forward, with_tensor_leaves(structure, leaves), options);
        loss.backward();
        return std::pair{prediction, loss};
      },
      warm_up_calls);
}

/// Forward, loss and backward in the graph — gradients land in static tensors — and the optimizer
/// step eagerly after each replay, as dynamo's cudagraphs backend does: the fallback for a step
/// whose optimizer cannot be captured.
step_function forward_backward_step(model_instance& model, const step_options& options) {
  auto state = std::make_shared<replayed_step>();
  auto optimizer = make_optimizer(model, options);
  const model_inputs& structure = model.example_inputs;
  const auto clear_warm_up_results = [&model, &state] {
    for (auto& p : model.module->parameters()) p.mutable_grad() = torch::Tensor();
    state->output_structure = c10::IValue();
  };
  {
    forward_side_effects_guard restore(*model.module);
    state->graph = std::make_unique<captured_graph>(
        tensor_leaves(model.example_inputs),
        [&](const std::vector<torch::Tensor>& leaves) {
          auto [prediction, loss] =
              forward_and_loss(model.forward, with_tensor_leaves(structure, leaves), options);
          loss.backward();
          state->output_structure = c10::ivalue::Tuple::create({prediction, loss});
          return tensor_leaves({state->output_structure});
        },
        warm_up_calls, clear_warm_up_results);
  }
  return [&model, state, optimizer, options](const model_inputs& inputs) -> c10::IValue {
    const auto outputs = state->graph->replay(tensor_leaves(inputs));
    optimizer->step();  // reads the static gradients the replay wrote
    if (!options.collect_full_output) return c10::IValue();
    const auto both = with_tensor_leaves({state->output_structure}, outputs).front();
    const auto& elements = both.toTupleRef().elements();
    return full_train_output(model, elements[0], elements[1].toTensor());
  };
}

/// The whole step captured; where that fails, forward+backward captured with `fallback_reason`
/// saying why the optimizer runs outside the graph.
step_function train_step(model_instance& model, const step_options& options,
                         std::string& fallback_reason) {
  model.module->train();
  try {
    return whole_train_step(model, options);
  } catch (const std::runtime_error& e) {
    fallback_reason = std::string("the optimizer step runs eagerly after each replay of the "
                                  "captured forward and backward: the whole train step could "
                                  "not be captured (") + e.what() + ")";
  }
  return forward_backward_step(model, options);
}

}  // namespace

backend_step make_cudagraphs_step(model_instance& model, const step_options& options) {
  const auto started = std::chrono::steady_clock::now();
  backend_step result;
  std::string fallback_reason;
  try {
    result.step = options.training ? train_step(model, options, fallback_reason)
                                   : eval_step(model, options);
  } catch (const std::runtime_error& e) {
    throw backend_unsupported(std::string("dynamo=cudagraphs cannot capture this ") +
                              (options.training ? "train" : "eval") + " step: " + e.what());
  }
  synchronize_device(options.device);
  result.compile = compile_report_since(started);
  result.compile->capture_fallback = fallback_reason;
  return result;
}

// The step of backends/cudagraphs_descriptor.cpp.
const backend_step_registration cudagraphs_step{
    "cudagraphs", [](model_instance& model, const step_options& options, const backend_context&) {
      return make_cudagraphs_step(model, options);
    }};

}  // namespace benchmatrix
