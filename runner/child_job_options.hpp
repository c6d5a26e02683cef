// The one mapping from experiment_runner's options to a child's job description
// (core/child_job.hpp): the parent builds each child's job with it, and a config run by hand
// (`--experiment-config=JSON --model-config=JSON`, the `Run with ...` line's flags) builds the same
// job from its own command line.
#pragma once

#include "core/child_job.hpp"
#include "runner/model_selection.hpp"
#include "runner/runner_options.hpp"

#include <string>

namespace benchmatrix {

/// The job of one config: `options`' child settings and timestamp, with the given role, suite (one
/// of options.suite_names), experiment, model and result channel ("" for none: the child reports
/// by itself). --model-path goes only into the exported suite's jobs.
[[nodiscard]] child_job make_child_job(const runner_options& options, child_role role,
                                       const std::string& suite_name,
                                       const experiment_config& experiment,
                                       const std::string& model_name,
                                       const std::string& result_path);

/// The suite and model of --model-config: {"model_name": "<name>"} (the suite is --suite-name's
/// one), or {"suite_name": "<suite>", "model_name": "<name>"} (the suite one of --suite-name's,
/// required when it lists several). Throws on anything else.
[[nodiscard]] selected_model model_config_model(const std::string& model_config,
                                                const std::vector<std::string>& suite_names);

/// The timing job of a config run by hand: options.experiment_config and options.model_config
/// (both set) parsed, no result channel (the record is appended to the results file).
[[nodiscard]] child_job hand_run_job(const runner_options& options);

}  // namespace benchmatrix
