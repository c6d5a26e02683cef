// The configs of a sweep: the selected models × the expanded experiments, model-major as the
// original runs them, and the record identity each one's records carry. Shared by the sweep itself,
// a --slurm submission (which plans every partition) and the merge of a --slurm sweep.
#pragma once

#include "core/experiment_config.hpp"
#include "core/record.hpp"
#include "runner/model_selection.hpp"
#include "runner/runner_options.hpp"

#include <string>
#include <vector>

namespace benchmatrix {

struct planned_config {
  size_t model_index = 0;   // 1-based among the (suite, model) pairs, for progress
  size_t config_index = 0;  // 1-based among all (model, experiment) pairs
  std::string suite;        // the model's suite (one of --suite-name's)
  std::string model;
  experiment_config experiment;
  /// The child's --model-config: {"model_name": ...}, as the original's; with several suites
  /// {"suite_name": ..., "model_name": ...}, so that the `Run with ...` line names the suite.
  std::string model_json;
  /// How progress and logs name the model: "<suite>/<model>" with several suites, else the model.
  [[nodiscard]] std::string model_label(const runner_options& options) const;
};

/// The configs of `models` (already selected) × the options' experiment matrix.
[[nodiscard]] std::vector<planned_config> plan_configs(const std::vector<selected_model>& models,
                                                       const runner_options& options);

/// Throws usage_error when two of `models` from different suites share a name while a flag writes
/// files named by model (--save-output, --dump-pytorch-profiles, --save-ir-format, --dump-hlo,
/// --dump-dynamo-counters, --export): their files would overwrite each other. Records are kept
/// apart by their suite_name whatever the flags.
void check_model_files_apart(const std::vector<selected_model>& models,
                             const runner_options& options);

/// The identity of the config's records, as a child running on `accelerator_model` writes them.
[[nodiscard]] record_identity planned_identity(const planned_config& config,
                                               const runner_options& options,
                                               const std::string& accelerator_model);

/// The config's placement_free_fingerprint (runner/resume.hpp): equal to that of its record from
/// any host or GPU.
[[nodiscard]] std::string placement_free_key(const planned_config& config,
                                             const runner_options& options);

}  // namespace benchmatrix
