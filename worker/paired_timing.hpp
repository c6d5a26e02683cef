// The paired timing loop of --paired-baseline (issue 24; core/paired_speedups.hpp has the order
// rule and the statistics): per repeat, the baseline backend's step and the experiment's each run
// one timed segment (worker/timing_loop.hpp's, synchronised the same way) on their own identical
// copies of the same prepared inputs, in ABBA order (baseline first in even repeats, experiment
// first in odd ones), so that slow drift of the machine cancels within every two repeats.
//
// Both steps are built on the same model instance and share its parameters and buffers. In train
// configs each step's optimizer updates those shared parameters, so each step starts from the
// parameters the other one left: the same as two consecutive train steps of one backend, which is
// what every repeat times anyway. What the steps must not share is their `.grad` tensors: eager's
// step sets them to None and lets backward allocate new ones, while a CUDA graph's replay writes
// into the static gradient tensors it captured and its optimizer reads them from the parameters.
// paired_gradients keeps one set per step and installs it around the step's segments (untimed).
// Inputs are never shared: a step may write into its inputs (cudagraphs copies them into its
// static input tensors; that is the backend's business, it does not touch the caller's copy).
#pragma once

#include "worker/timing_loop.hpp"

#include <array>
#include <functional>
#include <vector>

namespace benchmatrix {

enum class paired_side { baseline = 0, experiment = 1 };

/// Train configs: one set of `.grad` tensors per paired step, over the model's parameters.
class paired_gradients {
public:
  /// Both sides start with the parameters' current gradients taken as nobody's (see leave()).
  explicit paired_gradients(std::vector<torch::Tensor> parameters);
  /// Installs `side`'s gradient tensors in the parameters (undefined ones before its first leave).
  void enter(paired_side side);
  /// Keeps the parameters' gradient tensors as `side`'s (after its step ran or was built).
  void leave(paired_side side);

private:
  std::vector<torch::Tensor> m_parameters;
  std::array<std::vector<torch::Tensor>, 2> m_gradients;  // by paired_side
};

struct paired_repeat_timings {
  std::vector<repeat_timing> baseline;    // one per repeat
  std::vector<repeat_timing> experiment;  // one per repeat
};

/// Runs options.repeat paired repeats. `gradients` (train configs; null for eval) is entered and
/// left around every segment, and left with the experiment's installed. `after_repeat(r, output)`
/// runs after each repeat's two segments with the experiment's last output.
[[nodiscard]] paired_repeat_timings
run_paired_repeats(const step_function& baseline, const step_function& experiment,
                   const model_inputs& example_inputs, const timing_options& options,
                   paired_gradients* gradients,
                   const std::function<void(int, const c10::IValue&)>& after_repeat);

}  // namespace benchmatrix
