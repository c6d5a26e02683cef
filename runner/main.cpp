// experiment_runner: parent mode expands and runs a sweep; child mode (--job=<file>, the job the
// parent wrote) runs one config. The same binary is both, and --experiment-config with
// --model-config runs one config by hand as a sweep's child would.
#include "backends/inductor_program.hpp"
#include "core/child_job.hpp"
#include "core/cpu_affinity.hpp"
#include "core/log.hpp"
#include "runner/child_job_options.hpp"
#include "runner/child_start.hpp"
#include "runner/runner_cli.hpp"
#include "runner/slurm_merge.hpp"
#include "runner/slurm_submission.hpp"
#include "runner/sweep.hpp"
#include "suites/imported/imported_suites.hpp"
#include "suites/imported/torchbench_checkout.hpp"
#include "suites/model_catalog.hpp"
#include "torch_support/torch_run_environment.hpp"
#include "worker/child_run.hpp"
#include "worker/verify_child.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

namespace {

constexpr const char* program = "experiment_runner";

/// Where suite YAMLs (<suite>.yaml) and matrices/ presets are read from: configs/ of this checkout
/// (compiled in), unless BENCHMATRIX_CONFIG_DIR names another directory. Set but empty counts as
/// unset, as XDG_CONFIG_HOME does (a `BENCHMATRIX_CONFIG_DIR=$UNSET_VAR` never means the working
/// directory).
struct config_directory {
  std::string path;
  bool from_environment = false;  // BENCHMATRIX_CONFIG_DIR set and not empty

  /// Adds the variable to an error about a file under the directory, so that a user who set it
  /// (or inherited it) learns where the path came from.
  [[nodiscard]] std::string named(const std::string& error) const {
    if (!from_environment || error.find(path) == std::string::npos) return error;
    return error + " (the config dir is BENCHMATRIX_CONFIG_DIR=" + path + ")";
  }
};

/// Throws usage_error naming the variable when BENCHMATRIX_CONFIG_DIR names no directory.
config_directory config_dir() {
  const char* value = std::getenv("BENCHMATRIX_CONFIG_DIR");
  if (!value || !*value) return {BENCHMATRIX_DEFAULT_CONFIG_DIR, false};
  if (!std::filesystem::is_directory(value))
    throw benchmatrix::usage_error(std::string("BENCHMATRIX_CONFIG_DIR=") + value +
                                   ": no such directory (expected the directory of the suite YAMLs "
                                   "and matrices/ presets; unset, it is " +
                                   BENCHMATRIX_DEFAULT_CONFIG_DIR + ")");
  return {value, true};
}

/// <config dir>/<suite>.yaml: skip lists, batch sizes, tolerances. Required for torchbench; other
/// suites (dummy, the test suites) run without one (null) unless it exists (a test may point
/// BENCHMATRIX_CONFIG_DIR at a directory holding one).
std::unique_ptr<benchmatrix::suite_config> load_suite_config(const std::string& suite_name) {
  const config_directory dir = config_dir();
  const auto suite_yaml = std::filesystem::path(dir.path) / (suite_name + ".yaml");
  if (suite_name != "torchbench" && !std::filesystem::exists(suite_yaml)) return nullptr;
  try {
    return std::make_unique<benchmatrix::suite_config>(
        benchmatrix::suite_config::load_file(suite_yaml.string()));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(dir.named(e.what()));
  }
}

/// --suite-name=torchbench: the checkout whose models run (registered in place of the built-in
/// ones), said in one line before the sweep starts.
void use_torchbench_checkout(benchmatrix::runner_options& options) {
  using namespace benchmatrix;
  const auto& suites = options.suite_names;
  if (std::find(suites.begin(), suites.end(), "torchbench") == suites.end()) {
    if (!options.torchbench_dir.empty())
      throw usage_error("--torchbench-dir is for --suite-name=torchbench");
    return;
  }
  const torchbench_source source = find_torchbench_checkout(options.torchbench_dir);
  options.torchbench_checkout = source.checkout;
  if (source.checkout.empty()) {
    std::cerr << program << ": torchbench: benchmatrix's built-in C++ models (" << source.why
              << ")\n";
    return;
  }
  register_torchbench_checkout(source.checkout, options.random_weights,
                               load_suite_config("torchbench")->canary_models());
  std::cerr << program << ": torchbench: the models of the TorchBench checkout " << source.checkout
            << " (" << source.why << ")" << (options.random_weights ? ", random weights" : "")
            << "\n";
}

/// Runs one config's child in the job's role; returns the exit status.
int run_job(const benchmatrix::child_job& job) {
  using namespace benchmatrix;
  set_running_child_role(job.role);
  // Before the child starts any thread (LibTorch's pools, the compile helper): all of them then
  // run on the slice of CPUs --compile-ahead gave this child.
  if (!job.settings.cpus.empty()) set_cpu_affinity(parse_cpu_list(job.settings.cpus));
  if (!job.settings.model_path.empty()) register_exported_models(job.settings.model_path);
  const auto config = load_suite_config(job.suite_name);
  // set for torchbench jobs only (child_job_options.cpp), so `config` is torchbench.yaml's
  if (!job.settings.torchbench_checkout.empty())
    register_torchbench_checkout(job.settings.torchbench_checkout, job.settings.random_weights,
                                 config->canary_models());
  if (job.role == child_role::verifier) return run_verifier_child(job, config.get());
  return run_child(job, config.get());
}

/// --job=FILE: reads the job and runs it; returns the exit status. Also what a child started as a
/// fork of the sweep runs, so it first drops what it inherited of the sweep's display: its log
/// lines go to its own stderr file, not around the sweep's progress line.
int run_job_file(const std::filesystem::path& job_file) {
  using namespace benchmatrix;
  set_status_line_hooks({}, {});
  try {
    const child_job job = read_child_job_file(job_file);
    set_log_level(job.settings.log_level);
    return run_job(job);
  } catch (const usage_error& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
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
  // The huggingface and timm_models suites list their models in the config dir; an error in it
  // is reported after --help had its chance.
  std::optional<std::string> config_error;
  try {
    register_listed_suites(config_dir().path);
  } catch (const std::exception& e) {
    config_error = e.what();
  }
  auto suites = registered_suites();
  suites.push_back(exported_suite_name);  // its models come from --model-path
  std::sort(suites.begin(), suites.end());
  const auto specs = runner_flag_specs(suites);
  if (asks_for_help(arguments)) {
    std::cout << help_text(program,
                           "Runs suite x accelerator x backend x test experiment matrices, each "
                           "config in its own child process,\nand appends one record per config "
                           "to <output-dirname>/<output-basename> (results.jsonl).",
                           specs);
    return 0;
  }
  config_directory configs;
  try {
    if (config_error) throw usage_error(*config_error);
    configs = config_dir();
  } catch (const usage_error& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 2;
  }
  runner_options options;
  try {
    options = parse_runner_options(arguments, suites, configs.path);
  } catch (const usage_error& e) {
    std::cerr << usage_line(program, specs) << "\n"
              << program << ": error: " << configs.named(e.what()) << "\n";
    return 2;
  }
  try {
    if (options.job_file) return run_job_file(*options.job_file);
    set_log_level(options.log_level);
    if (!options.model_path.empty()) register_exported_models(options.model_path);
    use_torchbench_checkout(options);
    (void)inductor_program_choice();  // a bad BENCHMATRIX_INDUCTOR_PROGRAM ends the run, not each child
    (void)child_start_choice();       // as a bad BENCHMATRIX_CHILD_START does
    if (options.runs_one_config_by_hand()) return run_job(hand_run_job(options));
    sweep_inputs inputs;
    std::vector<std::unique_ptr<suite_config>> configs_of_suites;  // outlive the sweep
    for (const auto& suite : options.suite_names) {
      configs_of_suites.push_back(load_suite_config(suite));
      inputs.configs[suite] = configs_of_suites.back().get();
      inputs.suites.push_back({suite, suite_model_names(suite)});
    }
    inputs.options = options;
    inputs.argv.assign(argv, argv + argc);
    inputs.self_exe = std::filesystem::read_symlink("/proc/self/exe").string();
    inputs.environment = torch_run_environment();
    inputs.run_job_file = run_job_file;
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
