// Runtime compilation of a C++/CUDA source — a run_and_check module (kernel_check/kernel_module.hpp)
// or a backend_bench op kernel (ops/kernel_registration.hpp, see kernel_build_options) — into a
// shared library, cached in core/compile_cache under a SHA-256 of everything the library depends
// on: the source bytes, the registration header's bytes, the compiler command and version, the torch
// version and, for .cu, the GPU architecture. Headers the source includes itself are not hashed:
// --clear_cache after changing one. Torch-free: the compiler runs as a helper process.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace benchmatrix {

enum class kernel_language { cpp, cuda, python };

/// From the file name: .py python, .cu cuda, .cpp/.cc/.cxx cpp. Throws std::invalid_argument.
[[nodiscard]] kernel_language language_of(const std::filesystem::path& source);
[[nodiscard]] const char* language_name(kernel_language language);

struct kernel_build {
  std::string key;              // the cache key (64 hex digits)
  std::string command;          // the compiler command line, readable
  std::string description;      // what the key covers, as stored in the cache manifest
  std::filesystem::path library;
  bool compiled = false;        // false: the compiler failed (error holds its output)
  bool cache_hit = false;
  std::string rebuilt_because;  // a corrupt entry was replaced
  double seconds = 0;           // this run's compile wall time (0 for a hit)
  double build_seconds = 0;     // the entry's original compile time
  std::string error;
};

/// What differs between the tools that compile kernels at run time (run_and_check's modules,
/// backend_bench's per-op kernels): the defaults are run_and_check's.
struct kernel_build_options {
  /// Names the tool and its protocol version in the key (entries of two tools never alias).
  std::string tool = "run_and_check kernel module v1";
  /// The registration header the source relies on, relative to the source tree; its bytes are
  /// part of the key.
  std::string header = "kernel_check/kernel_module.hpp";
  /// Extra -I directories (e.g. the folder of the user's source, for its own headers). Like the
  /// source's path they are not part of the key, and headers found there are not hashed.
  std::vector<std::filesystem::path> include_dirs;
};

/// The cache key and command for `source` without compiling (what --clear_cache removes).
/// `cuda_arch` ("90" for sm_90) matters for .cu only.
[[nodiscard]] kernel_build describe_kernel_build(const std::filesystem::path& source,
                                                 const std::string& cuda_arch,
                                                 const kernel_build_options& options = {});

/// Compiles `source` (or finds it) under `cache_root`. Compiler failures come back in the result;
/// other problems (unreadable source, cache I/O) throw std::runtime_error.
[[nodiscard]] kernel_build build_kernel_module(const std::filesystem::path& source,
                                               const std::filesystem::path& cache_root,
                                               const std::string& cuda_arch,
                                               const kernel_build_options& options = {});

/// The compute capability of CUDA device `index` as "90": $BENCHMATRIX_CUDA_ARCH, else nvidia-smi,
/// else "90" (Hopper, this project's GPU machine).
[[nodiscard]] std::string cuda_arch_of_device(int index);

/// Where kernel_module.hpp and python/ live, baked in at configure time.
[[nodiscard]] std::string benchmatrix_source_dir();
[[nodiscard]] std::string benchmatrix_python();
/// The LibTorch version the build was configured with ("2.11.0").
[[nodiscard]] std::string benchmatrix_torch_version();

}  // namespace benchmatrix
