// The parent: expands the matrix, selects models, resumes, and runs one child per (model, experiment)
// with a timeout, turning every outcome into exactly one results.jsonl record (xla_runner.md §3).
// Never initialises CUDA and never loads a model.
#pragma once

#include "core/argparse.hpp"
#include "core/run_environment.hpp"
#include "runner/model_selection.hpp"
#include "runner/runner_options.hpp"
#include "suites/suite_config.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

struct sweep_inputs {
  runner_options options;
  std::vector<std::string> argv;         // the command line as given; argv[0] is replaced by self_exe
  std::string self_exe;                  // absolute path of this executable (children run it)
  std::vector<suite_models> suites;      // options.suite_names' models, in that order
  /// Each suite's skip lists; a suite absent or null: every model is compatible (dummy).
  std::map<std::string, const suite_config*> configs;
  run_environment environment;           // the parent's (its children's), for run_context.json
  /// Runs a child's job file in this process and returns its exit status (main's handling of
  /// --job=FILE): what a child started as a fork of the sweep runs (runner/child_start.hpp).
  /// Empty: every child is exec'd.
  std::function<int(const std::filesystem::path& job_file)> run_job_file;
};

/// Runs the sweep; returns the process exit status (0, or 130 after Ctrl-C).
/// Throws usage_error / std::runtime_error for problems that stop the sweep before it starts.
int run_sweep(const sweep_inputs& inputs);

}  // namespace benchmatrix
