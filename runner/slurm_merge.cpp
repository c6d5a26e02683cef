#include "runner/slurm_merge.hpp"

#include "core/host_info.hpp"
#include "core/log.hpp"
#include "core/results_file.hpp"
#include "core/results_record.hpp"
#include "core/text_file.hpp"
#include "runner/resume.hpp"
#include "runner/run_context.hpp"
#include "runner/slurm_plan.hpp"
#include "runner/summary_table.hpp"

#include <iostream>
#include <map>

namespace benchmatrix {
namespace {

/// Bytes of a task's log quoted in the error record of a config it did not finish.
constexpr std::uintmax_t task_log_tail_bytes = 4 * 1024;

/// The task's records by placement-free fingerprint (the last one wins, as resume reads them).
std::map<std::string, std::string> task_records(const std::filesystem::path& path,
                                                std::optional<long long> batch_size) {
  std::map<std::string, std::string> records;
  const auto lines = read_records(path, [&](size_t number, const std::string& error) {
    log_warning("Ignoring corrupt line " + std::to_string(number) + " of " + path.string() + " (" +
                error + ")");
  });
  for (const auto& line : lines)
    records[placement_free_fingerprint(line.record.identity, batch_size)] = line.text;
  return records;
}

}  // namespace

int run_slurm_merge(const sweep_inputs& inputs) {
  const auto& o = inputs.options;
  const slurm_layout layout(o);
  std::vector<std::string> merged;
  size_t missing = 0;
  for (const auto& task : plan_slurm_tasks(inputs)) {
    if (task.configs.empty()) continue;
    const auto records = task_records(layout.task_results(task.partition), o.batch_size);
    for (const auto& c : task.configs) {
      if (const auto found = records.find(placement_free_key(c, o)); found != records.end()) {
        merged.push_back(found->second);
        continue;
      }
      ++missing;
      const auto log = layout.task_log(task.partition);
      const std::string error =
          "no record: Slurm array task " + std::to_string(task.partition) +
          " ended before this config finished (cancelled, over its time limit, or failed); "
          "running the same --slurm command again resubmits it. The end of " + log.string() +
          ":\n" + read_file_tail(log, task_log_tail_bytes, "the task's log");
      merged.push_back(error_record_line(
          planned_identity(c, o, accelerator_model(c.experiment.accelerator)), error,
          "VERIFIER_DIDNT_RUN"));
    }
  }
  std::filesystem::create_directories(layout.output_dir);
  replace_results(layout.merged_results(), merged);
  try {
    write_run_context(layout.output_dir / "run_context.json",
                      current_run_context(inputs.argv, inputs.environment));
  } catch (const std::exception& e) {
    log_warning(std::string("run context not written: ") + e.what());
  }
  std::cout << summary_table(merged) << std::flush;
  log_info("Merged " + std::to_string(merged.size()) + " records into " +
           layout.merged_results().string() +
           (missing ? " (" + std::to_string(missing) + " configs without a record from their task "
                      "became error records)"
                    : ""));
  return 0;
}

}  // namespace benchmatrix
