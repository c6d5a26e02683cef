// A model given as a torch.export package (.pt2, the archive torch.export.save writes), run from C++
// by torch::nativert, LibTorch 2.11's runtime for those packages: the model kind of a user's .pt2
// in the exported suite (--suite-name=exported --model-path=FILE.pt2).
//
// nativert runs inference only (its ModelRunner enters c10::InferenceMode): such a model runs eval.
// It holds its weights itself, so the model_instance has no parameters; the program comes already
// on the run's device and in its dtype (python -m benchmatrix_import --suite=exported prepares it).
#pragma once

#include "suites/model.hpp"

#include <filesystem>

namespace benchmatrix {

/// The runtime that runs these models, as records and logs name it.
inline constexpr const char* nativert_runtime =
    "LibTorch's torch::nativert (ModelRunnerHandle), the C++ runtime of torch.export packages: "
    "the program's ATen ops run one by one, under c10::InferenceMode (eval only)";

/// Loads the program "model" of `package` with torch::nativert and its example inputs from `inputs`
/// (a torch.save'd tuple of tensors, moved to `device`). The instance's exported_program is
/// `package` (the inductor backend compiles it) and its forward cannot be traced. The batch size is
/// the first input's first dimension (1 for a scalar). Throws std::runtime_error naming the file
/// and nativert's reason when it cannot load it. An error while the program runs is thrown again
/// with the program, the arguments' dtypes and shapes and nativert's message; a CUDA allocation
/// failure stays a c10::OutOfMemoryError.
[[nodiscard]] model_instance load_exported_program(const std::filesystem::path& package,
                                                   const std::filesystem::path& inputs,
                                                   const torch::Device& device);

}  // namespace benchmatrix
