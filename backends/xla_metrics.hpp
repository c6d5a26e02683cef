// The XLA/PJRT backend's counters, in the shape of PyTorch/XLA's metrics that the original runner
// records per repeat (reference/xla_runner.md §4.3): xla_CompileTime_time_s/_number,
// xla_ExecuteTime_time_s/_number and the host-side trace_total_time. The backend adds to them; the
// child reads and clears them around each timed repeat. One process runs one config, so they are
// process-wide.
#pragma once

namespace benchmatrix {

struct xla_counters {
  double compile_time_s = 0;      // PJRT_Client_Compile wall time
  long long compile_number = 0;   // compiles
  double execute_time_s = 0;      // PJRT_LoadedExecutable_Execute until the device finished
  long long execute_number = 0;   // executions
  double trace_time_s = 0;        // host time of the step calls (the original's model_iter_fn)
};

/// The process's counters (zero until an XLA step ran).
[[nodiscard]] xla_counters& process_xla_counters();

}  // namespace benchmatrix
