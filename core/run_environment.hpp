// The settings a benchmark process ran with that change its timings without changing the code:
// the LibTorch build, the thread counts and the CPUs it may use. Each record carries its child's as
// the top-level "run_environment" (a comparison of two nights can then blame `taskset` or
// OMP_NUM_THREADS instead of the code); run_context.json carries the parent's. Settings only, no
// measurements (host load belongs to machine_state).
#pragma once

#include "core/python_json.hpp"

#include <optional>
#include <string>

namespace benchmatrix {

struct run_environment {
  std::string torch_version;                      // TORCH_VERSION of the LibTorch linked, "2.11.0"
  std::optional<std::string> torch_build;         // its package's __version__, "2.11.0+cu130"
  std::optional<std::string> torch_git_revision;  // its package's git_version (the commit built)
  std::optional<std::string> cuda_version;        // CUDA it was built with; none: CPU-only build
  int intra_op_threads = 0;                       // at::get_num_threads()
  int inter_op_threads = 0;                       // at::get_num_interop_threads()
  std::optional<std::string> omp_num_threads;     // OMP_NUM_THREADS as set; none: unset
  std::optional<std::string> mkl_num_threads;     // MKL_NUM_THREADS as set; none: unset
  std::string cpu_affinity;                       // core/cpu_affinity.hpp cpu_affinity_text()
};

/// The torch-free part of this process's run environment: OMP_NUM_THREADS, MKL_NUM_THREADS and the
/// CPU affinity (torch_support/torch_run_environment.hpp fills the rest).
[[nodiscard]] run_environment process_run_environment();

/// {"torch": {"version", "build", "git_revision", "cuda"}, "threads": {"intra_op", "inter_op",
/// "OMP_NUM_THREADS", "MKL_NUM_THREADS"}, "cpu_affinity": "0-3"}; unknown or unset values are null.
[[nodiscard]] json_value to_json(const run_environment& environment, json_allocator& allocator);

}  // namespace benchmatrix
