// The experiment matrix of a sweep: the Cartesian product of the command line's axes with the
// validity rules of shared/reference/xla_runner.md §2.2.
#pragma once

#include "core/experiment_config.hpp"
#include "runner/runner_options.hpp"

#include <vector>

namespace benchmatrix {

/// The Cartesian product of the axes (CLI order, duplicates dropped; defaults where an axis was not
/// given), outermost axis first, filtered by the structural validity rules of §2.2. Configs that are
/// valid but cannot run on this host are kept: the sweep records them as SKIP.
[[nodiscard]] std::vector<experiment_config> expand_experiment_matrix(const runner_options& options);

}  // namespace benchmatrix
