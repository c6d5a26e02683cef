// --rerun=MODEL[:BACKEND[:TEST]]: configs of the sweep's matrix to run again inside an existing
// results file (a re-verification, a re-measurement of one config of a night). Their records are
// set aside as --retry-failed sets failed ones aside (<results>.retried), and the new records take
// their place; every other record of the file stays as it was.
#pragma once

#include "runner/sweep_plan.hpp"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace benchmatrix {

struct rerun_selector {
  std::string text;                    // as given, for messages
  std::string model;                   // exact model name
  std::optional<std::string> backend;  // report name (eager, inductor, torchscript, ...); none: any
  std::optional<std::string> test;     // eval | train; none: any
};

/// Parses one --rerun value. An empty or "*" BACKEND or TEST part matches any. Throws usage_error
/// for an empty model, more than three parts, or a TEST other than eval/train.
[[nodiscard]] rerun_selector parse_rerun_selector(const std::string& text);

/// True when the config is one the selector names (its backend as reports name it,
/// backends/backend_name.hpp display_backend_name).
[[nodiscard]] bool selects(const rerun_selector& selector, const planned_config& config);

/// The placement-free keys (sweep_plan.hpp placement_free_key) of the configs `selectors` name.
/// Throws usage_error naming a selector that names no config of `configs` (and the models and
/// backends the matrix has), as a typo would otherwise re-run nothing silently.
[[nodiscard]] std::set<std::string> rerun_keys(const std::vector<rerun_selector>& selectors,
                                               const std::vector<planned_config>& configs,
                                               const runner_options& options);

}  // namespace benchmatrix
