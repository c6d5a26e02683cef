// The child's timed repeats (shared/reference/xla_runner.md §4.2): per repeat, prepare one copy of
// the inputs per iteration (untimed), synchronise, run the iterations, synchronise, and read the
// clock. Nothing else happens between the two clock reads.
#pragma once

#include "backends/backend.hpp"
#include "torch_support/device_sync.hpp"

#include <functional>
#include <vector>

namespace benchmatrix {

struct timing_options {
  int repeat = 10;              // timed runs
  int iterations_per_run = 1;   // steps per timed run
  bool randomize_input = false; // fill floating inputs with randn per prepared iteration
  bool pure_wall_time = false;  // CUDA-event minimum per step instead of the wall clock (§4.4)
  torch::Device device = torch::kCPU;
};

/// One repeat's figures, in seconds.
struct repeat_timing {
  double total_time = 0;     // wall clock from before the first step to after the final sync
  double per_iter_time = 0;  // total_time / iterations_per_run
};

/// One iteration's inputs: clones of the example inputs (floating ones redrawn with randn when
/// `randomize`), as every repeat prepares them before its clock starts.
[[nodiscard]] model_inputs prepare_step_inputs(const model_inputs& example, bool randomize);

/// One repeat's inputs, untimed: the RNG reset to the seed, then `inputs` (one entry per
/// iteration, resized to options.iterations_per_run) filled with prepare_step_inputs' copies. Two
/// calls prepare identical inputs (worker/paired_timing.hpp relies on it).
void prepare_repeat_inputs(const model_inputs& example, const timing_options& options,
                           std::vector<model_inputs>& inputs);

/// One timed segment: the RNG reset to the seed (the steps' own random draws, e.g. dropout, start
/// alike in every segment), synchronise, run `step` once per entry of `inputs`, synchronise, read
/// the clock. With options.pure_wall_time the CUDA-event minimum per step instead, then one more
/// step for the output. Fills `total_time` (seconds) and returns the last step's output.
[[nodiscard]] c10::IValue run_timed_segment(const step_function& step,
                                            const std::vector<model_inputs>& inputs,
                                            const timing_options& options, double& total_time);

/// Throws std::invalid_argument for options the device cannot time (--pure-wall-time off CUDA).
void check_timing_options(const timing_options& options);

/// Runs the repeats; `after_repeat(r, last_output)` runs after each repeat's clock stopped.
[[nodiscard]] std::vector<repeat_timing>
run_timed_repeats(const step_function& step, const model_inputs& example_inputs,
                  const timing_options& options,
                  const std::function<void(int, const c10::IValue&)>& after_repeat);

}  // namespace benchmatrix
