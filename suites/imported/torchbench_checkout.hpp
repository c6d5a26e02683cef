// The user's TorchBench checkout (pytorch/benchmark) as the torchbench suite: found as PyTorch/XLA's
// runner finds it, its models registered in place of the built-in C++ ones, each built by
// python -m benchmatrix_import --suite=torchbench (python/benchmatrix_import/torchbench_checkout.py:
// Model(test, device, batch_size).get_module() as PyTorch's benchmarks/dynamo/torchbench.py calls
// it) and run as a traced TorchScript program like the other imported suites.
// Torch-free: the parent registers the names; only the child's build runs the helper and LibTorch.
#pragma once

#include <optional>
#include <set>
#include <string>

namespace benchmatrix {

/// Where the torchbench suite's models come from, as --torchbench-dir, BENCHMATRIX_TORCHBENCH_DIR
/// and the search decided it.
struct torchbench_source {
  std::string checkout;  // absolute path of the folder holding torchbenchmark/; "" for built-in
  std::string why;       // how it was chosen, for the sweep's first line
};

/// The checkout the torchbench suite runs: `explicit_dir` (--torchbench-dir) if given, else
/// $BENCHMATRIX_TORCHBENCH_DIR, else the first of ./, ../, ../../, ../../../ (relative to the
/// working directory) that holds torchbenchmark/, torchbench/ or benchmark/ with a
/// torchbenchmark/__init__.py inside; "none" (flag or variable) names the built-in models.
/// Throws usage_error for a named folder that is not a checkout, naming it and what it lacks.
[[nodiscard]] torchbench_source find_torchbench_checkout(const std::string& explicit_dir);

/// Replaces the torchbench suite's built-in models by the checkout's: every
/// torchbenchmark/models/<name>/ with an __init__.py, its default batch sizes and
/// ALLOW_CUSTOMIZE_BSIZE read from that file's literal class attributes (DEFAULT_TRAIN_BSIZE =
/// None: the model does not train; an attribute the file does not set is left to the model when
/// it is built), and the torchbenchmark/canary_models/<name>/ of the names in `canary_models` (the
/// suite YAML's canary_models) that the checkout has. `random_weights`: --random-weights, passed
/// to the helper.
void register_torchbench_checkout(const std::string& checkout, bool random_weights,
                                  const std::set<std::string>& canary_models);

}  // namespace benchmatrix
