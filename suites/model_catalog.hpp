// The torch-free view of the model registry: which suites and models exist. The parent needs only
// names (it never builds a model), so it does not include LibTorch headers for them.
#pragma once

#include <string>
#include <vector>

namespace benchmatrix {

/// The names of all suites that have at least one model.
[[nodiscard]] std::vector<std::string> registered_suites();

/// The model names of a suite, sorted byte-wise (upper case first, as TorchBench lists them).
[[nodiscard]] std::vector<std::string> suite_model_names(const std::string& suite);

}  // namespace benchmatrix
