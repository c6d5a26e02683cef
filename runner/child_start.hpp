// How the sweep starts a config's timing and verifier children: as a fork of itself that runs the
// job (process/forked_child.hpp: no second LibTorch load, about 0.4 s of CPU saved per child) or
// by exec'ing experiment_runner --job=FILE. Both give the child the same job file, environment,
// process group, deadline and output files; the fork is taken only where it cannot differ from
// the exec (below).
#pragma once

#include "core/experiment_config.hpp"

#include <map>
#include <optional>
#include <string>

namespace benchmatrix {

enum class child_start { fork, exec };

/// BENCHMATRIX_CHILD_START: "fork" (the default: a fork wherever the rules below allow) or "exec"
/// (every child exec'd). Throws usage_error naming the variable for another value.
[[nodiscard]] child_start child_start_choice();

/// Why the child of `experiment` with `environment` is exec'd rather than forked, or nullopt when
/// it may be forked: only CPU configs without XLA (a CUDA child must initialise CUDA and NVML
/// itself, never inherit this process's NVML state; PJRT reads XLA_FLAGS as it loads), with this
/// process's environment unchanged but for the variables only XLA reads (OpenMP and the loader
/// read theirs when LibTorch loads), from a single-threaded sweep.
[[nodiscard]] std::optional<std::string>
fork_start_refusal(const experiment_config& experiment,
                   const std::map<std::string, std::string>& environment);

}  // namespace benchmatrix
