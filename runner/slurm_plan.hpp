// The shape of a --slurm sweep: its model partitions (one array task each, as --total-partitions
// and --partition-id split the sorted model list) and where everything lives under the shared
// output directory:
//
//   <output-dirname>/<output-basename>                 the merged results (written by the merge job)
//   <output-dirname>/run_context.json                  the sweep's run context (for html_report)
//   <output-dirname>/slurm/array.sbatch, merge.sbatch  the submitted scripts
//   <output-dirname>/slurm/task-<p>/<output-basename>  array task p's own results (it resumes them)
//   <output-dirname>/slurm/logs/task-<p>.log, merge.log
#pragma once

#include "runner/sweep.hpp"
#include "runner/sweep_plan.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace benchmatrix {

struct slurm_layout {
  std::filesystem::path output_dir;  // absolute
  std::string basename;

  explicit slurm_layout(const runner_options& options);
  [[nodiscard]] std::filesystem::path slurm_dir() const { return output_dir / "slurm"; }
  [[nodiscard]] std::filesystem::path task_dir(int partition) const;
  [[nodiscard]] std::filesystem::path task_results(int partition) const;
  [[nodiscard]] std::filesystem::path task_log(int partition) const;
  [[nodiscard]] std::filesystem::path merge_log() const { return slurm_dir() / "logs" / "merge.log"; }
  [[nodiscard]] std::filesystem::path merged_results() const { return output_dir / basename; }
};

struct slurm_task {
  int partition = 0;                    // --partition-id, also $SLURM_ARRAY_TASK_ID
  std::vector<planned_config> configs;  // empty: no selected model in this partition (not submitted)
};

/// --slurm-tasks, or min(9, models of the suites).
[[nodiscard]] int slurm_task_count(const sweep_inputs& inputs);

/// Every partition of the sweep, in order, with its configs (as that task's sweep plans them).
[[nodiscard]] std::vector<slurm_task> plan_slurm_tasks(const sweep_inputs& inputs);

}  // namespace benchmatrix
