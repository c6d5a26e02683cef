#include "backends/backend.hpp"

#include "backends/backend_registry.hpp"
#include "backends/backend_steps.hpp"

#include <stdexcept>

namespace benchmatrix {
namespace {

std::function<step_function(step_function)>& test_backend_wrapper() {
  static std::function<step_function(step_function)> wrap;
  return wrap;
}

backend_step select_backend(const experiment_config& experiment, model_instance& model,
                            const step_options& options, const backend_context& context) {
  const backend_descriptor* backend = find_backend(experiment);
  const backend_step_factory* make = backend && !backend->step_factory.empty()
                                         ? find_backend_step_factory(backend->step_factory)
                                         : nullptr;
  if (make) {
    // the backend's own applicability (its descriptor's reasons), whoever asks for the step
    if (backend->unavailable_reason)
      if (auto reason = backend->unavailable_reason(experiment)) throw backend_unsupported(*reason);
    return (*make)(model, options, context);
  }
  throw std::runtime_error("this build has no backend for xla=" + experiment.xla.value_or("None") +
                           ", dynamo=" + experiment.dynamo.value_or("None") +
                           ", torch_xla2=" + experiment.torch_xla2.value_or("None"));
}

}  // namespace

backend_step make_backend_step(const experiment_config& experiment, model_instance& model,
                               const step_options& options, const backend_context& context) {
  capture_memory_scope captures;  // the CUDA graphs this step's preparation captures
  backend_step result = select_backend(experiment, model, options, context);
  result.graph_capture = captures.seen();
  if (const auto& wrap = test_backend_wrapper()) result.step = wrap(std::move(result.step));
  return result;
}

compile_report compile_report_since(std::chrono::steady_clock::time_point started) {
  compile_report report;
  report.compile_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

void set_test_backend_wrapper(std::function<step_function(step_function)> wrap) {
  test_backend_wrapper() = std::move(wrap);
}

}  // namespace benchmatrix
