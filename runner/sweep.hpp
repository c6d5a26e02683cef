// The parent: expands the matrix, selects models, resumes, and runs one child per (model, experiment)
// with a timeout, turning every outcome into exactly one results.jsonl record (xla_runner.md §3).
// Never initialises CUDA and never loads a model.
#pragma once

#include "core/argparse.hpp"
#include "core/run_environment.hpp"
#include "runner/runner_options.hpp"
#include "suites/suite_config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

struct sweep_inputs {
  runner_options options;
  std::vector<std::string> argv;         // the command line as given; argv[0] is replaced by self_exe
  std::string self_exe;                  // absolute path of this executable (children run it)
  std::vector<std::string> suite_models; // every model of the suite, sorted byte-wise
  const suite_config* config = nullptr;  // skip lists; nullptr: every model is compatible (dummy)
  run_environment environment;           // the parent's (its children's), for run_context.json
};

/// Runs the sweep; returns the process exit status (0, or 130 after Ctrl-C).
/// Throws usage_error / std::runtime_error for problems that stop the sweep before it starts.
int run_sweep(const sweep_inputs& inputs);

}  // namespace benchmatrix
