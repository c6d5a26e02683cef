#include "backends/captured_train_step.hpp"

#include "backends/cuda_graph_capture.hpp"
#include "backends/forward_side_effects.hpp"
#include "torch_support/device_sync.hpp"
#include "torch_support/ivalue_tensors.hpp"

#include <memory>
#include <optional>

namespace benchmatrix {
namespace {

/// The parameters' values, to put back after steps that must not count (warm-ups, a failed
/// capture).
class parameter_snapshot {
public:
  explicit parameter_snapshot(torch::nn::Module& module) : m_parameters(module.parameters()) {
    for (const auto& p : m_parameters) m_values.push_back(p.detach().clone());
  }
  void restore() {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < m_parameters.size(); ++i) m_parameters[i].copy_(m_values[i]);
  }

private:
  std::vector<torch::Tensor> m_parameters;
  std::vector<torch::Tensor> m_values;
};

struct replayed_step {
  std::unique_ptr<captured_graph> graph;
  /// (prediction, loss); its tensors are placeholders. Cleared after the warm-ups, as the
  /// parameters' copy (see after_warm_ups).
  c10::IValue output_structure;
};

}  // namespace

step_function capture_whole_train_step(model_instance& model, const step_options& options,
                                       loss_and_gradients_function loss_and_gradients,
                                       int warm_ups) {
  auto state = std::make_shared<replayed_step>();
  auto optimizer = make_optimizer(model, options, /*capturable=*/true);
  std::optional<parameter_snapshot> start(std::in_place, *model.module);
  const auto back_to_start = [&] {
    if (start) start->restore();
    optimizer->reset_state();
    optimizer->zero_grad();
  };
  // Between the warm-ups and the capture: back to the start, then the parameters' copy and the
  // last warm-up's output freed, so that the capture's peak (backends/capture_memory.hpp) holds
  // only what a replay needs, as eager's step would. A capture runs no kernel, so a capture that
  // fails leaves the parameters as restored here.
  const auto after_warm_ups = [&] {
    back_to_start();
    synchronize_device(options.device);  // the restoring copies read the copy: done before it goes
    start.reset();
    state->output_structure = c10::IValue();
  };
  try {
    forward_side_effects_guard restore(*model.module);  // buffers and generators, as before
    state->graph = std::make_unique<captured_graph>(
        tensor_leaves(model.example_inputs),
        [&](const std::vector<torch::Tensor>& leaves) {
          optimizer->zero_grad();
          auto [prediction, loss] = loss_and_gradients(leaves);
          optimizer->step();
          state->output_structure = c10::ivalue::Tuple::create({prediction, loss});
          return tensor_leaves({state->output_structure});
        },
        warm_ups, after_warm_ups);
  } catch (const std::runtime_error&) {
    synchronize_device(options.device);
    back_to_start();
    throw;
  }
  return [&model, state, optimizer, options](const model_inputs& inputs) -> c10::IValue {
    const auto outputs = state->graph->replay(tensor_leaves(inputs));
    if (!options.collect_full_output) return c10::IValue();
    const auto both = with_tensor_leaves({state->output_structure}, outputs).front();
    const auto& elements = both.toTupleRef().elements();
    return full_train_output(model, elements[0], elements[1].toTensor());
  };
}

}  // namespace benchmatrix
