// --compile-ahead=N: before the timed sweep, every config whose backend compiles into the compile
// cache (backend_descriptor::compiles_into_cache: inductor, the PJRT backends) runs once as a
// compile-only child (child_role::compile_ahead), N at a time, each child and its compile helper
// on its own share of the parent's CPUs. The timed children then load what was built (a cache hit)
// and the sweep waits for N compiles at once instead of one.
//
// A phase before the sweep rather than compiles beside it: a timed child must have the host to
// itself (compiles on the other cores would slow its launch-bound steps, the per-process noise of
// BENCHMARKS.md's paired-speedup runs), so nothing is timed while the phase runs, and the phase
// uses every core. Its compiles share the GPU for Inductor's autotuning benchmarks, which may pick
// a different Triton config than a compile alone would (README, "Compiling ahead").
//
// Compiles share the GPU: one that runs out of device memory beside the others is compiled again
// alone, on every CPU, at the end of the phase. A compile that fails otherwise, is skipped or
// times out only logs a line: the config's timing child compiles again and reports the error or
// SKIP in its record, as without the flag.
#pragma once

#include "core/experiment_config.hpp"
#include "process/child_pool.hpp"
#include "runner/runner_options.hpp"
#include "runner/sweep_plan.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

/// One config to compile ahead.
struct compile_ahead_config {
  std::string key; // the caller's name for the config (the sweep's fingerprint)
  const planned_config* config = nullptr; // the sweep's config (suite, model, experiment)
  std::optional<std::string> device;      // --devices: the GPU it compiles on; nullopt: unpinned
};

/// Whether `experiment`'s backend builds artifacts a later child reuses (worth compiling ahead).
[[nodiscard]] bool compiles_into_cache(const experiment_config& experiment);

/// Runs the configs' compile-only children, options.compile_ahead at a time (fewer when there are
/// fewer configs or CPUs), each on one share of this process's CPUs, in `pool` (which must hold no
/// other child). Returns, per key of a config that compiled, the JSON object its timing record gets
/// as compile.ahead: the compile child's compile figures (compile_time_s, compile_helper_s,
/// cache_hit, breakdown_s, ...) plus "cpus" (its share, cpulist form), "jobs" (children at once)
/// and "wall_time_s" (the child's whole life). Stops early, its children stopped, when
/// `interrupted` turns true.
[[nodiscard]] std::map<std::string, std::string>
compile_ahead(const std::vector<compile_ahead_config>& configs, const runner_options& options,
              const std::string& self_exe, child_pool& pool,
              const std::function<bool()>& interrupted);

/// `record_line` with `ahead` (a compile_ahead value) as its compile.ahead; a record without a
/// compile object (an error or SKIP record) is returned unchanged.
[[nodiscard]] std::string with_compile_ahead(const std::string& record_line,
                                             const std::string& ahead);

} // namespace benchmatrix
