// Which models a sweep runs (shared/reference/xla_runner.md §2.3): partition the sorted list first,
// then keep names matching any --filter regex and no --exclude regex (case-insensitive search).
#pragma once

#include "core/argparse.hpp"
#include "runner/runner_options.hpp"

#include <string>
#include <vector>

namespace benchmatrix {

/// `all_models` sorted byte-wise. Throws usage_error for an invalid regex or a selection that is
/// empty although filters were given (naming the filters and the available models).
[[nodiscard]] std::vector<std::string> select_models(const std::vector<std::string>& all_models,
                                                     const runner_options& options);

/// The same selection, possibly empty (a --slurm submission skips the partitions with no model).
/// Throws usage_error for an invalid regex.
[[nodiscard]] std::vector<std::string> models_in_partition(const std::vector<std::string>& all_models,
                                                           const runner_options& options);

}  // namespace benchmatrix
