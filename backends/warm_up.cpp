#include "backends/warm_up.hpp"

#include "backends/forward_side_effects.hpp"
#include "torch_support/device_sync.hpp"

namespace benchmatrix {

void warm_up(model_instance& model, const forward_function& forward, const step_options& options,
             int iterations) {
  forward_side_effects_guard restore(*model.module);
  for (int i = 0; i < iterations; ++i) {
    if (options.training) {
      auto [prediction, loss] = forward_and_loss(forward, model.example_inputs, options);
      loss.backward();
    } else {
      torch::NoGradGuard no_grad;
      (void)make_eval_step(forward, options)(model.example_inputs);
    }
  }
  for (auto& p : model.module->parameters()) p.mutable_grad() = torch::Tensor();
  synchronize_device(options.device);
}

}  // namespace benchmatrix
