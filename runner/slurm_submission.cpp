#include "runner/slurm_submission.hpp"

#include "core/argparse.hpp"
#include "core/log.hpp"
#include "core/results_file.hpp"
#include "core/results_record.hpp"
#include "core/text_file.hpp"
#include "process/helper_process.hpp"
#include "runner/resume.hpp"
#include "runner/slurm_merge.hpp"
#include "runner/slurm_plan.hpp"
#include "runner/summary_table.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

namespace benchmatrix {
namespace {

/// How often --slurm-wait asks scontrol about the merge job.
constexpr auto wait_poll_interval = std::chrono::seconds(2);

/// The word as one POSIX shell word: '...' with embedded quotes spliced in.
std::string shell_quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out.append("'\\''");
    else out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

/// Configs of the task with no record in its results file (every config with --no-resume; failed
/// records count as missing with --retry-failed, as the task's own resume treats them).
size_t configs_without_record(const slurm_task& task, const slurm_layout& layout,
                              const runner_options& o) {
  if (o.no_resume) return task.configs.size();
  std::set<std::string> done;
  const auto path = layout.task_results(task.partition);
  for (const auto& line : read_records(path, [](size_t, const std::string&) {})) {
    if (o.retry_failed && line.record.is_failed()) continue;
    done.insert(placement_free_fingerprint(line.record.identity, o.batch_size));
  }
  size_t missing = 0;
  for (const auto& c : task.configs) missing += done.count(placement_free_key(c, o)) == 0;
  return missing;
}

/// "#SBATCH" lines every job of the sweep shares: partition and the user's extra options.
std::string shared_directives(const runner_options& o) {
  std::string text;
  if (!o.slurm_partition.empty()) text += "#SBATCH --partition=" + o.slurm_partition + "\n";
  for (const auto& extra : o.slurm_sbatch_args) text += "#SBATCH " + extra + "\n";
  return text;
}

/// This command's flags (argv[1..]) quoted, followed by `extra` (already shell words).
std::string command_line(const sweep_inputs& in, const std::vector<std::string>& extra) {
  std::string text = shell_quote(in.self_exe);
  for (size_t i = 1; i < in.argv.size(); ++i) text.append(" ").append(shell_quote(in.argv[i]));
  for (const auto& word : extra) text.append(" \\\n    ").append(word);
  return text;
}

std::string array_script(const sweep_inputs& in, const slurm_layout& layout, int task_count,
                         const std::vector<int>& partitions) {
  const auto& o = in.options;
  std::string array;
  for (int p : partitions) array.append(array.empty() ? "" : ",").append(std::to_string(p));
  const int gpus = o.slurm_gpus_per_task.value_or(
      std::find(o.accelerator.begin(), o.accelerator.end(), "cuda") != o.accelerator.end() ? 1 : 0);
  std::string script =
      "#!/bin/bash\n"
      "# experiment_runner --slurm: one partition of the sorted model list per array task, into\n"
      "# its own results file (resumed when the task runs again). Written by experiment_runner.\n"
      "#SBATCH --job-name=benchmatrix\n"
      "#SBATCH --array=" + array + "\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --output=" + (layout.slurm_dir() / "logs" / "task-%a.log").string() + "\n";
  if (gpus > 0) script += "#SBATCH --gpus-per-task=" + std::to_string(gpus) + "\n";
  if (!o.slurm_time.empty()) script += "#SBATCH --time=" + o.slurm_time + "\n";
  script += shared_directives(o);
  const std::string task_dir = (layout.slurm_dir() / "task-").string();
  script += "exec " + command_line(in, {
      "--slurm-task",
      shell_quote("--slurm-tasks=" + std::to_string(task_count)),
      shell_quote("--total-partitions=" + std::to_string(task_count)),
      "\"--partition-id=${SLURM_ARRAY_TASK_ID}\"",
      shell_quote("--output-dirname=" + task_dir) + "\"${SLURM_ARRAY_TASK_ID}\"",
      shell_quote("--cache-dir=" + std::filesystem::absolute(o.cache_dir).lexically_normal().string()),
      shell_quote("--timestamp=" + python_float_repr(o.timestamp)),
  }) + "\n";
  return script;
}

std::string merge_script(const sweep_inputs& in, const slurm_layout& layout, int task_count) {
  const auto& o = in.options;
  std::string script =
      "#!/bin/bash\n"
      "# experiment_runner --slurm: merges the array tasks' results into one results file (runs\n"
      "# after the array whatever its tasks' fate), then writes the HTML report. Written by\n"
      "# experiment_runner.\n"
      "#SBATCH --job-name=benchmatrix-merge\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --output=" + layout.merge_log().string() + "\n";
  script += shared_directives(o);
  script += command_line(in, {"--slurm-merge",
                              shell_quote("--slurm-tasks=" + std::to_string(task_count)),
                              shell_quote("--timestamp=" + python_float_repr(o.timestamp))}) +
            " || exit $?\n";
  const auto report = std::filesystem::path(in.self_exe).parent_path() / "html_report";
  if (layout.basename == "results.jsonl")  // html_report reads <dir>/results.jsonl
    script += "if [ -x " + shell_quote(report.string()) + " ]; then\n  " +
              shell_quote(report.string()) + " " +
              shell_quote("--output-dirname=" + layout.output_dir.string()) + "\nfi\n";
  return script;
}

void write_script(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

/// The program's path on $PATH; throws naming what --slurm needs when it is not there.
std::string on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (!dirs.empty()) {
    const auto colon = dirs.find(':');
    const std::filesystem::path candidate =
        std::filesystem::path(std::string(dirs.substr(0, colon))) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    dirs = colon == std::string_view::npos ? "" : dirs.substr(colon + 1);
  }
  throw std::runtime_error(program + " is not on PATH: --slurm needs the Slurm client commands "
                           "(Debian: slurm-client) on the submitting host");
}

/// Runs a Slurm client command; returns its trimmed output. Throws with its output on failure.
std::string slurm_command(std::vector<std::string> argv, const slurm_layout& layout) {
  const auto log = layout.slurm_dir() / "logs" / (argv.front() + ".out");
  argv.front() = on_path(argv.front());
  const auto result = run_helper(argv, current_environment(), log);
  std::string output = read_text_file(log);
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  if (!result.exit.success()) {
    std::string command;
    for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
    throw std::runtime_error(command + " " + result.exit.describe() + ": " + output);
  }
  return output;
}

/// The job id of `sbatch --parsable` output ("123" or "123;cluster").
std::string job_id_of(const std::string& parsable) {
  const auto id = parsable.substr(0, parsable.find(';'));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error("sbatch printed '" + parsable + "' where a job id was expected");
  return id;
}

/// JobState of `scontrol show job`, or "" when Slurm no longer knows the job.
std::string job_state(const std::string& job, const slurm_layout& layout) {
  std::string text;
  try {
    text = slurm_command({"scontrol", "show", "job", "-o", job}, layout);
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).find("Invalid job id") != std::string::npos) return "";
    throw;
  }
  const auto at = text.find("JobState=");
  if (at == std::string::npos) return "";
  const auto begin = at + 9;
  return text.substr(begin, text.find(' ', begin) - begin);
}

int wait_for_merge(const std::string& merge_job, const slurm_layout& layout) {
  log_info("--slurm-wait: waiting for merge job " + merge_job + " (Ctrl-C stops waiting; the jobs go on)");
  std::string state;
  for (;;) {
    state = job_state(merge_job, layout);
    if (state != "PENDING" && state != "RUNNING" && state != "CONFIGURING" &&
        state != "COMPLETING" && state != "SUSPENDED" && state != "REQUEUED")
      break;
    std::this_thread::sleep_for(wait_poll_interval);
  }
  if (state != "COMPLETED" && !(state.empty() && std::filesystem::exists(layout.merged_results()))) {
    log_error("merge job " + merge_job + " ended " + (state.empty() ? "(state unknown)" : state) +
              "; the end of " + layout.merge_log().string() + ":\n" +
              read_file_tail(layout.merge_log(), 4096, "the merge log"));
    return 1;
  }
  std::vector<std::string> lines;
  for (const auto& line : read_results(layout.merged_results(), [](size_t, const std::string&) {}))
    lines.push_back(line.text);
  std::cout << summary_table(lines) << std::flush;
  log_info("Results in " + layout.merged_results().string());
  return 0;
}

}  // namespace

int run_slurm_submission(const sweep_inputs& inputs) {
  const auto& o = inputs.options;
  const slurm_layout layout(o);
  const int task_count = slurm_task_count(inputs);
  const auto tasks = plan_slurm_tasks(inputs);

  std::vector<int> partitions;  // tasks to submit
  size_t configs = 0, missing = 0;
  for (const auto& task : tasks) {
    if (task.configs.empty()) continue;
    configs += task.configs.size();
    const size_t task_missing = configs_without_record(task, layout, o);
    missing += task_missing;
    if (task_missing > 0) partitions.push_back(task.partition);
  }
  if (configs == 0)
    throw usage_error("no model of suite '" + o.suite_name_list() +
                      "' matches the filters");
  if (!std::filesystem::exists(layout.slurm_dir()) && std::filesystem::exists(layout.merged_results()))
    throw usage_error(layout.merged_results().string() +
                      " exists and is not the merge of a --slurm sweep (no " +
                      layout.slurm_dir().string() + "); the merge would replace it. Choose another "
                      "--output-dirname or move the file");
  log_info("--slurm: " + std::to_string(configs) + " configs in " + std::to_string(task_count) +
           " partitions; " + std::to_string(missing) + " without a record, in " +
           std::to_string(partitions.size()) + " array task(s)");

  if (o.dry_run) {
    if (!partitions.empty())
      std::cout << "# " << (layout.slurm_dir() / "array.sbatch").string() << "\n"
                << array_script(inputs, layout, task_count, partitions) << "\n";
    std::cout << "# " << (layout.slurm_dir() / "merge.sbatch").string()
              << (partitions.empty() ? "" : " (sbatch --dependency=afterany:<array job>)") << "\n"
              << merge_script(inputs, layout, task_count);
    return 0;
  }
  std::filesystem::create_directories(layout.slurm_dir() / "logs");
  if (partitions.empty()) {
    log_info("--slurm: every config has a record; merging without submitting");
    return run_slurm_merge(inputs);
  }
  write_script(layout.slurm_dir() / "array.sbatch",
               array_script(inputs, layout, task_count, partitions));
  write_script(layout.slurm_dir() / "merge.sbatch", merge_script(inputs, layout, task_count));
  const auto array_job = job_id_of(
      slurm_command({"sbatch", "--parsable", (layout.slurm_dir() / "array.sbatch").string()}, layout));
  const auto merge_job = job_id_of(slurm_command(
      {"sbatch", "--parsable", "--dependency=afterany:" + array_job, "--kill-on-invalid-dep=no",
       (layout.slurm_dir() / "merge.sbatch").string()},
      layout));
  std::cout << "Submitted array job " << array_job << " (" << partitions.size()
            << " task(s), logs in " << (layout.slurm_dir() / "logs").string() << ") and merge job "
            << merge_job << " (results: " << layout.merged_results().string() << ")\n"
            << std::flush;
  if (!o.slurm_wait) return 0;
  return wait_for_merge(merge_job, layout);
}

}  // namespace benchmatrix
