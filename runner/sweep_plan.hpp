// The configs of a sweep: the selected models × the expanded experiments, model-major as the
// original runs them, and the record identity each one's records carry. Shared by the sweep itself,
// a --slurm submission (which plans every partition) and the merge of a --slurm sweep.
#pragma once

#include "core/experiment_config.hpp"
#include "core/record.hpp"
#include "runner/runner_options.hpp"

#include <string>
#include <vector>

namespace benchmatrix {

struct planned_config {
  size_t model_index = 0;   // 1-based, for progress
  size_t config_index = 0;  // 1-based among all (model, experiment) pairs
  std::string model;
  experiment_config experiment;
  std::string model_json;   // {"model_name": ...}: the child's --model-config
};

/// The configs of `models` (already selected) × the options' experiment matrix.
[[nodiscard]] std::vector<planned_config> plan_configs(const std::vector<std::string>& models,
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
