// Loading a kernel library: a shared library whose static registrars (TORCH_LIBRARY_IMPL(aten, CPU
// or CUDA, m) { m.impl("add.Tensor", &my_add); }) install aten overrides when it is loaded. Used by
// backend_bench's `--backend library` child and by experiment_runner's `--backend-library`.
#pragma once

#include <filesystem>

namespace benchmatrix {

/// dlopens `path` with RTLD_NOW | RTLD_GLOBAL and keeps it loaded for the life of the process (a
/// library holding CUDA modules must not be unloaded). LibTorch must already be loaded (it is in
/// any process linking it). Throws std::runtime_error naming the path and dlerror()'s reason (a
/// missing file, an unresolved symbol, an ABI mismatch); a registrar that throws while loading
/// (e.g. an override whose signature does not match the aten schema) is reported the same way.
void load_kernel_library(const std::filesystem::path& path);

} // namespace benchmatrix
