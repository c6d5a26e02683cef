// Which models a sweep runs (shared/reference/xla_runner.md §2.3): partition the sorted list first,
// then keep names matching any --filter regex and no --exclude regex (case-insensitive search).
// With several suites (--suite-name=a,b) the list is their models one suite after the other, in
// the order given, each suite's sorted: partitions split that list and the filters apply to every
// suite's names. The dummy suite's one model is never filtered nor partitioned (as in the
// original), except that a --slurm sweep runs it in its last partition only.
#pragma once

#include "core/argparse.hpp"
#include "runner/runner_options.hpp"

#include <string>
#include <vector>

namespace benchmatrix {

/// Every model of one suite, sorted byte-wise.
struct suite_models {
  std::string suite;
  std::vector<std::string> models;
};

/// One model a sweep runs, and its suite.
struct selected_model {
  std::string suite;
  std::string model;
  bool operator==(const selected_model& other) const {
    return suite == other.suite && model == other.model;
  }
};

/// The selection over `suites` (options.suite_names' suites, in that order). Throws usage_error for
/// an invalid regex or a selection that is empty although filters were given (naming the filters
/// and the available models).
[[nodiscard]] std::vector<selected_model> select_models(const std::vector<suite_models>& suites,
                                                        const runner_options& options);

/// The same selection, possibly empty (a --slurm submission skips the partitions with no model).
/// Throws usage_error for an invalid regex.
[[nodiscard]] std::vector<selected_model> models_in_partition(
    const std::vector<suite_models>& suites, const runner_options& options);

}  // namespace benchmatrix
