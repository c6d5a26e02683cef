#include "runner/library_versions.hpp"

#include <torch/version.h>

namespace benchmatrix {

std::string libtorch_version() { return TORCH_VERSION; }

std::optional<std::string> cuda_build_version() {
#ifdef BENCHMATRIX_CUDA_VERSION
  return std::string(BENCHMATRIX_CUDA_VERSION);
#else
  return std::nullopt;
#endif
}

}  // namespace benchmatrix
