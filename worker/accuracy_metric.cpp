#include "worker/accuracy_metric.hpp"

#include "backends/availability.hpp"
#include "backends/backend_name.hpp"
#include "backends/backend_registry.hpp"
#include "core/results_record.hpp"
#include "torch_support/ivalue_tensors.hpp"
#include "verifier/assert_close.hpp"
#include "worker/child_run.hpp"
#include "worker/timing_loop.hpp"

namespace benchmatrix {
namespace {

std::string message_of(const std::exception& e) {
  if (const auto* error = dynamic_cast<const c10::Error*>(&e)) return error->what_without_backtrace();
  return e.what();
}

/// One step on fresh clones of the example inputs, its output detached on the CPU.
c10::IValue run_step(const step_function& step, const model_instance& model, torch::Device device) {
  model_inputs inputs;
  for (const auto& input : model.example_inputs)
    inputs.push_back(map_tensors(input, [](const torch::Tensor& t) { return t.clone(); }));
  const c10::IValue output = step(inputs);
  synchronize_device(device);
  return map_tensors(output, [](const torch::Tensor& t) { return t.detach().cpu(); });
}

}  // namespace

experiment_config accuracy_baseline_config(const experiment_config& experiment,
                                           const nullable_string& dynamo) {
  experiment_config baseline = experiment;
  baseline.dynamo = dynamo;
  // The xla runtime the dynamo value's backend runs under (openxla: PJRT, backends/
  // backend_registry.hpp); every other baseline runs without XLA.
  const backend_descriptor* backend = dynamo ? find_dynamo_backend(*dynamo) : nullptr;
  baseline.xla = backend ? backend->identity.xla : std::nullopt;
  baseline.torch_xla2.reset();
  if (!baseline.xla) {
    baseline.xla_flags.reset();
    baseline.keep_model_data_on_cuda = false;
  }
  return baseline;
}

void add_accuracy_metrics(json_value& metrics, json_value& accuracy, json_allocator& a,
                          const child_job& job, model_instance& model, const step_options& step,
                          const step_function& backend_step) {
  const experiment_config& experiment = job.experiment;
  const experiment_config baseline =
      accuracy_baseline_config(experiment, job.settings.accuracy_baseline);
  const std::string baseline_name =
      display_backend_name(baseline.dynamo, baseline.xla, baseline.torch_xla2);
  const auto text = [&](const char* key, const std::string& value) {
    accuracy.AddMember(json_value(key, a), json_value(value.c_str(), a), a);
  };
  text("baseline", baseline_name);
  if (step.training) {
    text("note", "not compared for train: a train step updates the weights it runs on");
    return;
  }
  if (auto reason = unavailable_reason(baseline)) {
    text("error", "the baseline cannot run here: " + *reason);
    return;
  }
  const bool eager_baseline = !baseline.dynamo && !baseline.xla;
  c10::IValue actual, expected;
  try {
    torch::NoGradGuard no_grad;
    step_function baseline_step =
        eager_baseline
            ? make_eager_step(model, step)
            : make_backend_step(baseline, model, step, make_backend_context(job)).step;
    actual = run_step(backend_step, model, step.device);
    expected = run_step(baseline_step, model, step.device);
  } catch (const std::exception& e) {
    text("error", message_of(e));
    return;
  }
  if (baseline.dynamo == experiment.dynamo && baseline.xla == experiment.xla &&
      baseline.torch_xla2 == experiment.torch_xla2)
    text("note", "the config's backend is the baseline: two runs of it compared");
  close_tolerances tolerances;
  tolerances.rtol = job.settings.accuracy_rtol;
  tolerances.atol = job.settings.accuracy_atol;
  const close_result result = assert_close(actual, expected, tolerances);
  const int repeat = job.settings.repeat;
  metrics.AddMember("accuracy", once_per_record_list(result.passed ? 1.0 : 0.0, repeat, a), a);
  metrics.AddMember("accuracy_max_abs_error",
                    once_per_record_list(result.max_abs_error, repeat, a), a);
  metrics.AddMember("accuracy_max_rel_error",
                    once_per_record_list(result.max_rel_error, repeat, a), a);
  if (!result.passed) text("mismatch", result.mismatch);
}

}  // namespace benchmatrix
