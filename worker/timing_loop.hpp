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

/// Runs the repeats; `after_repeat(r, last_output)` runs after each repeat's clock stopped.
[[nodiscard]] std::vector<repeat_timing>
run_timed_repeats(const step_function& step, const model_inputs& example_inputs,
                  const timing_options& options,
                  const std::function<void(int, const c10::IValue&)>& after_repeat);

}  // namespace benchmatrix
