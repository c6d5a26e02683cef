// The versions this build's children run with: LibTorch's and CUDA's known at build time (the parent
// must not initialise CUDA to ask the runtime); cuDNN's asked of the loaded library, for processes
// that compute on CUDA anyway.
#pragma once

#include <optional>
#include <string>

namespace benchmatrix {

/// LibTorch's version, e.g. "2.11.0" (TORCH_VERSION).
[[nodiscard]] std::string libtorch_version();

/// The torch package's __version__ (e.g. "2.11.0+cu130") and git_version (the commit it was built
/// from), read from the version.py next to the LibTorch this binary links, at configure time;
/// nullopt when that LibTorch is not a torch package (a plain LibTorch archive has no version.py).
[[nodiscard]] std::optional<std::string> libtorch_build();
[[nodiscard]] std::optional<std::string> libtorch_git_revision();

/// The CUDA toolkit version LibTorch's CMake package reported at configure time, e.g. "13.0";
/// nullopt for a build without CUDA.
[[nodiscard]] std::optional<std::string> cuda_build_version();

/// The cuDNN library loaded at run time, as torch.backends.cudnn.version() reports it (e.g. 91900
/// for 9.19.0), through LibTorch's CUDA hooks; nullopt for a build without CUDA or cuDNN. Call it
/// only in a process that runs on CUDA (it loads libcudnn).
[[nodiscard]] std::optional<long> cudnn_runtime_version();

}  // namespace benchmatrix
