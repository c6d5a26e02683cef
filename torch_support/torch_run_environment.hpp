// The run environment (core/run_environment.hpp) of this process as LibTorch sees it: the build
// it links and the thread counts its pools use. A child records its own; the parent's, written to
// run_context.json, is what its children inherit (they get its environment and CPU affinity).
#pragma once

#include "core/run_environment.hpp"

namespace benchmatrix {

/// process_run_environment() plus the LibTorch version, build and thread counts. Asks for the
/// thread counts, which sizes LibTorch's thread pools as the environment says (it does not touch
/// CUDA).
[[nodiscard]] run_environment torch_run_environment();

}  // namespace benchmatrix
