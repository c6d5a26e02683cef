// Our own CUPTI Activity API collector (shared/reference/anchors_cpp.md §4): kernel records of a
// window of work, collected as CONCURRENT_KERNEL (KIND_KERNEL would serialise the kernels), and the
// device's memcpys and memsets (MEMCPY, MEMSET), with 4 MiB host buffers. Summaries only
// (kernel_summary.hpp): kernel count and summed time, memory operations' count and summed time,
// busy time (the union of all their intervals: overlap counted once, idle gaps not at all) and the
// top kernels.
// One CUPTI client per process: never run this while Kineto (the PyTorch profiler) is active.
#pragma once

#include "profiler/kernel_summary.hpp"

#include <cstddef>

namespace benchmatrix {

/// True when this build has the collector (CUPTI found at configure time).
[[nodiscard]] bool cupti_available();

/// Collects kernel and memory-operation activity between start() and stop(). Construct it after
/// CUDA is initialised.
class cupti_collector {
public:
  /// Registers the buffer callbacks. Throws std::runtime_error (with CUPTI's message) when CUPTI
  /// cannot be used: no build support, no driver, or another client holds it.
  cupti_collector();
  ~cupti_collector();
  cupti_collector(const cupti_collector&) = delete;  // owns CUPTI's process-wide callbacks
  cupti_collector& operator=(const cupti_collector&) = delete;

  void start();
  /// Call after synchronising the device: flushes every buffer (forced) and summarises the window.
  [[nodiscard]] kernel_summary stop(size_t top_count = 10);
};

}  // namespace benchmatrix
