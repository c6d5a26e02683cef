#include "worker/paired_timing.hpp"

#include "core/paired_speedups.hpp"

namespace benchmatrix {

paired_gradients::paired_gradients(std::vector<torch::Tensor> parameters)
    : m_parameters(std::move(parameters)) {
  for (auto& side : m_gradients) side.resize(m_parameters.size());
}

void paired_gradients::enter(paired_side side) {
  const auto& gradients = m_gradients[static_cast<size_t>(side)];
  for (size_t i = 0; i < m_parameters.size(); ++i) m_parameters[i].mutable_grad() = gradients[i];
}

void paired_gradients::leave(paired_side side) {
  auto& gradients = m_gradients[static_cast<size_t>(side)];
  for (size_t i = 0; i < m_parameters.size(); ++i) gradients[i] = m_parameters[i].grad();
}

paired_repeat_timings
run_paired_repeats(const step_function& baseline, const step_function& experiment,
                   const model_inputs& example_inputs, const timing_options& o,
                   paired_gradients* gradients,
                   const std::function<void(int, const c10::IValue&)>& after_repeat) {
  check_timing_options(o);
  paired_repeat_timings timings;
  timings.baseline.reserve(static_cast<size_t>(o.repeat));
  timings.experiment.reserve(static_cast<size_t>(o.repeat));
  // One copy of the repeat's inputs per side: prepare_repeat_inputs resets the RNG first, so the
  // two are identical, randomised ones included.
  std::array<std::vector<model_inputs>, 2> inputs;
  for (int r = 0; r < o.repeat; ++r) {
    for (auto& side_inputs : inputs) prepare_repeat_inputs(example_inputs, o, side_inputs);
    const std::array<paired_side, 2> order =
        baseline_runs_first(r) ? std::array{paired_side::baseline, paired_side::experiment}
                               : std::array{paired_side::experiment, paired_side::baseline};
    c10::IValue experiment_output;
    repeat_timing baseline_timing, experiment_timing;
    for (const paired_side side : order) {
      const bool is_baseline = side == paired_side::baseline;
      repeat_timing& t = is_baseline ? baseline_timing : experiment_timing;
      if (gradients) gradients->enter(side);
      c10::IValue output = run_timed_segment(is_baseline ? baseline : experiment,
                                             inputs[static_cast<size_t>(side)], o, t.total_time);
      if (gradients) gradients->leave(side);
      t.per_iter_time = t.total_time / o.iterations_per_run;
      if (!is_baseline) experiment_output = std::move(output);
    }
    timings.baseline.push_back(baseline_timing);
    timings.experiment.push_back(experiment_timing);
    // What runs after the repeat (--save-output, --collect-full-output's gradients, counters, the
    // accuracy check and profiling after the loop) sees the experiment's gradients.
    if (gradients) gradients->enter(paired_side::experiment);
    after_repeat(r, experiment_output);
  }
  return timings;
}

}  // namespace benchmatrix
