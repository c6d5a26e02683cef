// The backend interface: turn a built model into a step function that the timing loop calls once
// per iteration. One folder/file per backend behind this interface; eager is the first.
#pragma once

#include "runner/experiment_config.hpp"
#include "suites/model.hpp"

#include <functional>

namespace benchmatrix {

/// One model iteration: a forward (eval) or a whole train step. Returns what the step produces
/// (the prediction for eval; for train nothing, or — with collect_full_output — the tuple
/// (prediction, loss, {"<param>.grad": gradient}, {"<param>": parameter after the update}), as
/// dynamo's collect_results; a parameter without gradient gets zeros, so None and 0 compare equal).
using step_function = std::function<c10::IValue(const model_inputs&)>;

struct step_options {
  bool training = false;
  /// Autocast for the forward (xla_runner.md §7.3: training on CUDA, or force_amp models) in
  /// float16, without a GradScaler, as the original does.
  bool use_amp = false;
  torch::Device device = torch::kCPU;
  bool use_sgd = false;  // else Adam; both with lr 0.01 (§7.2)
  bool collect_full_output = false;
};

/// `sum/numel` for a tensor, the mean over list/tuple/dict entries (torch._dynamo.testing
/// reduce_to_scalar_loss). Throws std::invalid_argument for other outputs.
[[nodiscard]] torch::Tensor reduce_to_scalar_loss(const c10::IValue& output);

/// TorchBench models trained with SGD by the original runner (TRAIN_WITH_SGD); others use Adam.
[[nodiscard]] bool trains_with_sgd(const std::string& model_name);

/// Eager execution: eval calls forward; train runs zero_grad, forward, loss, backward, step.
/// The model must outlive the returned function.
[[nodiscard]] step_function make_eager_step(model_instance& model, const step_options& options);

/// The step of the experiment's backend (its xla and dynamo values): eager for xla=None,
/// dynamo=None. Throws for a backend this build cannot run (runner/availability.hpp says which).
[[nodiscard]] step_function make_backend_step(const experiment_config& experiment,
                                              model_instance& model, const step_options& options);

/// Tests only: every step make_backend_step returns afterwards is passed through `wrap` (the test
/// build's perturbing and throwing backends, tests/faulty). Eager reference runs are not wrapped.
void set_test_backend_wrapper(std::function<step_function(step_function)> wrap);

}  // namespace benchmatrix
