#include "torch_support/library_versions.hpp"

#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

namespace benchmatrix {

std::string libtorch_version() { return TORCH_VERSION; }

std::optional<std::string> libtorch_build() {
#ifdef BENCHMATRIX_TORCH_BUILD
  return std::string(BENCHMATRIX_TORCH_BUILD);
#else
  return std::nullopt;
#endif
}

std::optional<std::string> libtorch_git_revision() {
#ifdef BENCHMATRIX_TORCH_GIT_REVISION
  return std::string(BENCHMATRIX_TORCH_GIT_REVISION);
#else
  return std::nullopt;
#endif
}

std::optional<std::string> cuda_build_version() {
#ifdef BENCHMATRIX_CUDA_VERSION
  return std::string(BENCHMATRIX_CUDA_VERSION);
#else
  return std::nullopt;
#endif
}

std::optional<long> cudnn_runtime_version() {
  try {
    const auto& hooks = at::detail::getCUDAHooks();
    if (!hooks.hasCuDNN()) return std::nullopt;  // no CUDA library, or LibTorch built without cuDNN
    return hooks.versionRuntimeCuDNN();
  } catch (const c10::Error&) {
    return std::nullopt;  // the hooks could not load cuDNN
  }
}

}  // namespace benchmatrix
