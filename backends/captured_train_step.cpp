#include "backends/captured_train_step.hpp"

#include "backends/cuda_graph_capture.hpp"
#include "backends/forward_side_effects.hpp"
#include "torch_support/device_sync.hpp"
#include "torch_support/ivalue_tensors.hpp"

#include <memory>

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
  c10::IValue output_structure;  // (prediction, loss); its tensors are placeholders
};

}  // namespace

step_function capture_whole_train_step(model_instance& model, const step_options& options,
                                       loss_and_gradients_function loss_and_gradients,
                                       int warm_ups) {
  auto state = std::make_shared<replayed_step>();
  auto optimizer = make_optimizer(model, options, /*capturable=*/true);
  parameter_snapshot start(*model.module);
  const auto back_to_start = [&] {
    start.restore();
    optimizer->reset_state();
    optimizer->zero_grad();
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
        warm_ups, back_to_start);
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
