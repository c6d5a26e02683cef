// The versions this build's children run with, known at build time (the parent must not initialise
// CUDA to ask the runtime).
#pragma once

#include <optional>
#include <string>

namespace benchmatrix {

/// LibTorch's version, e.g. "2.11.0" (TORCH_VERSION).
[[nodiscard]] std::string libtorch_version();

/// The CUDA toolkit version LibTorch's CMake package reported at configure time, e.g. "13.0";
/// nullopt for a build without CUDA.
[[nodiscard]] std::optional<std::string> cuda_build_version();

}  // namespace benchmatrix
