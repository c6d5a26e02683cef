#include "backends/backend.hpp"

#include <stdexcept>

namespace benchmatrix {
namespace {

std::function<step_function(step_function)>& test_backend_wrapper() {
  static std::function<step_function(step_function)> wrap;
  return wrap;
}

}  // namespace

step_function make_backend_step(const experiment_config& experiment, model_instance& model,
                                const step_options& options) {
  if (experiment.xla || experiment.dynamo)
    throw std::runtime_error("this build has no backend for xla=" +
                             experiment.xla.value_or("None") +
                             ", dynamo=" + experiment.dynamo.value_or("None"));
  step_function step = make_eager_step(model, options);
  if (const auto& wrap = test_backend_wrapper()) step = wrap(std::move(step));
  return step;
}

void set_test_backend_wrapper(std::function<step_function(step_function)> wrap) {
  test_backend_wrapper() = std::move(wrap);
}

}  // namespace benchmatrix
