#include "runner/slurm_plan.hpp"

#include "runner/model_selection.hpp"

#include <algorithm>

namespace benchmatrix {

slurm_layout::slurm_layout(const runner_options& options)
    : output_dir(std::filesystem::absolute(options.output_dirname).lexically_normal()),
      basename(options.output_basename) {}

std::filesystem::path slurm_layout::task_dir(int partition) const {
  return slurm_dir() / ("task-" + std::to_string(partition));
}

std::filesystem::path slurm_layout::task_results(int partition) const {
  return task_dir(partition) / basename;
}

std::filesystem::path slurm_layout::task_log(int partition) const {
  return slurm_dir() / "logs" / ("task-" + std::to_string(partition) + ".log");
}

int slurm_task_count(const sweep_inputs& inputs) {
  if (inputs.options.slurm_tasks) return *inputs.options.slurm_tasks;
  size_t models = 0;  // of every suite of the sweep
  for (const auto& suite : inputs.suites) models += suite.models.size();
  return static_cast<int>(std::clamp<size_t>(models, 1, 9));
}

std::vector<slurm_task> plan_slurm_tasks(const sweep_inputs& inputs) {
  const int count = slurm_task_count(inputs);
  std::vector<slurm_task> tasks;
  std::vector<selected_model> all;  // of every partition
  for (int p = 0; p < count; ++p) {
    runner_options partition = inputs.options;
    partition.total_partitions = count;
    partition.partition_id = p;
    const auto models = models_in_partition(inputs.suites, partition);
    tasks.push_back({p, plan_configs(models, partition)});
    all.insert(all.end(), models.begin(), models.end());
  }
  check_model_files_apart(all, inputs.options);
  return tasks;
}

}  // namespace benchmatrix
