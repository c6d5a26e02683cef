// A loaded program's example inputs: the torch.save'd tuple of tensors beside a TorchScript program
// or in an import cache entry (inputs.pt), as the programs of suites/imported take them.
#pragma once

#include "suites/model.hpp"

#include <filesystem>
#include <string>

namespace benchmatrix {

/// The tensors of the torch.save'd tuple (or list, or single tensor) at `path`, moved to `device`.
/// Throws std::runtime_error naming the file and what was expected: missing, not a torch.save'd
/// file, an element that is no tensor, no tensor at all.
[[nodiscard]] model_inputs load_example_inputs(const std::filesystem::path& path,
                                               const torch::Device& device);

/// "Float[3, 8], Long[3]": the dtypes and shapes of a call's arguments (a non-tensor by its kind),
/// for the errors of a program that failed on them.
[[nodiscard]] std::string describe_arguments(const model_inputs& inputs);

}  // namespace benchmatrix
