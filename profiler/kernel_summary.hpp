// A window of GPU activity summarised: kernels (count, summed time, the top ones by time), the
// device's memory operations (memcpy and memset: count and summed time), and busy time, the union
// of all their intervals (overlap counted once, idle gaps not at all). Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace benchmatrix {

/// What a device activity record is: a kernel, or a memory operation the device executes (a
/// cudaMemcpy*/cudaMemset* call, or a memcpy/memset node of a CUDA graph).
enum class device_activity_kind { kernel, memcpy, memset };

struct device_activity {
  std::string name;  // a kernel's demangled name; a memory operation's kind, e.g. "Memcpy DtoD"
  device_activity_kind kind = device_activity_kind::kernel;
  int64_t start_ns = 0;  // 0 with end_ns 0: no timestamp (CUPTI lacked device memory)
  int64_t end_ns = 0;
};

struct kernel_total {
  std::string name;  // demangled
  int64_t calls = 0;
  int64_t time_ns = 0;
};

struct kernel_summary {
  int64_t kernels = 0;
  int64_t kernel_time_ns = 0;     // sum of kernel durations
  int64_t memory_ops = 0;         // memcpys and memsets on the device
  int64_t memory_op_time_ns = 0;  // sum of their durations
  /// Union of the kernels' and memory operations' intervals: the time the device was doing
  /// something. Before memory operations were collected (2026-11-28) it was the kernels' alone, so
  /// a step whose graph holds memset or memcpy nodes showed their time as idle.
  int64_t busy_time_ns = 0;
  int64_t dropped = 0;            // records CUPTI dropped or returned without timestamps
  std::vector<kernel_total> top;  // kernels by time, descending, at most `top_count`
};

/// The summary of a window's activities; records without timestamps count as dropped.
[[nodiscard]] kernel_summary summarise_activities(std::vector<device_activity> activities,
                                                  size_t top_count);

}  // namespace benchmatrix
