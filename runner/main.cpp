// experiment_runner: parent mode expands and runs a sweep; child mode (--job=<file>, the job the
// parent wrote) runs one config. The same binary is both, and --experiment-config with
// --model-config runs one config by hand as a sweep's child would.
#include "core/child_job.hpp"
#include "core/log.hpp"
#include "runner/child_job_options.hpp"
#include "runner/runner_cli.hpp"
#include "runner/slurm_merge.hpp"
#include "runner/slurm_submission.hpp"
#include "runner/sweep.hpp"
#include "suites/model_catalog.hpp"
#include "torch_support/library_versions.hpp"
#include "worker/child_run.hpp"
#include "worker/verify_child.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

namespace {

constexpr const char* program = "experiment_runner";

/// configs/ of this checkout (compiled in), unless BENCHMATRIX_CONFIG_DIR points elsewhere (suite
/// YAMLs <suite>.yaml and matrices/ presets are read from there).
std::string config_dir() {
  if (const char* dir = std::getenv("BENCHMATRIX_CONFIG_DIR")) return dir;
  return BENCHMATRIX_DEFAULT_CONFIG_DIR;
}

/// <config dir>/<suite>.yaml: skip lists, batch sizes, tolerances. Required for torchbench; other
/// suites (dummy, the test suites) run without one (null) unless it exists (a test may point
/// BENCHMATRIX_CONFIG_DIR at a directory holding one).
std::unique_ptr<benchmatrix::suite_config> load_suite_config(const std::string& suite_name) {
  const auto suite_yaml = std::filesystem::path(config_dir()) / (suite_name + ".yaml");
  if (suite_name == "torchbench" || std::filesystem::exists(suite_yaml))
    return std::make_unique<benchmatrix::suite_config>(
        benchmatrix::suite_config::load_file(suite_yaml.string()));
  return nullptr;
}

/// Runs one config's child in the job's role; returns the exit status.
int run_job(const benchmatrix::child_job& job) {
  using namespace benchmatrix;
  const auto config = load_suite_config(job.suite_name);
  if (job.role == child_role::verifier) return run_verifier_child(job, config.get());
  return run_child(job, config.get());
}

bool asks_for_help(const std::vector<std::string>& arguments) {
  for (const auto& a : arguments)
    if (a == "-h" || a == "--help") return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace benchmatrix;
  const std::vector<std::string> arguments(argv + 1, argv + argc);
  const auto suites = registered_suites();
  const auto specs = runner_flag_specs(suites);
  if (asks_for_help(arguments)) {
    std::cout << help_text(program,
                           "Runs suite x accelerator x backend x test experiment matrices, each "
                           "config in its own child process,\nand appends one record per config "
                           "to <output-dirname>/<output-basename> (results.jsonl).",
                           specs);
    return 0;
  }
  runner_options options;
  try {
    options = parse_runner_options(arguments, suites, config_dir());
  } catch (const usage_error& e) {
    std::cerr << usage_line(program, specs) << "\n" << program << ": error: " << e.what() << "\n";
    return 2;
  }
  try {
    if (options.job_file) {
      const child_job job = read_child_job_file(*options.job_file);
      set_log_level(job.settings.log_level);
      return run_job(job);
    }
    set_log_level(options.log_level);
    if (options.runs_one_config_by_hand()) return run_job(hand_run_job(options));
    const auto config = load_suite_config(options.suite_name);

    sweep_inputs inputs;
    inputs.options = options;
    inputs.argv.assign(argv, argv + argc);
    inputs.self_exe = std::filesystem::read_symlink("/proc/self/exe").string();
    inputs.suite_models = suite_model_names(options.suite_name);
    inputs.config = config.get();
    inputs.torch_version = libtorch_version();
    inputs.cuda_version = cuda_build_version();
    if (options.slurm && options.slurm_merge) return run_slurm_merge(inputs);
    if (options.slurm && !options.slurm_task) return run_slurm_submission(inputs);
    return run_sweep(inputs);  // also one task of a --slurm array
  } catch (const usage_error& e) {
    std::cerr << usage_line(program, specs) << "\n" << program << ": error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
}
