// A window of GPU kernels summarised: count, summed time, busy time (the union of the kernels'
// intervals: overlap counted once, idle gaps not at all) and the top kernels by time. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace benchmatrix {

struct kernel_total {
  std::string name;  // demangled
  int64_t calls = 0;
  int64_t time_ns = 0;
};

struct kernel_summary {
  int64_t kernels = 0;
  int64_t kernel_time_ns = 0;  // sum of kernel durations
  int64_t busy_time_ns = 0;    // union of kernel intervals
  int64_t dropped = 0;         // records CUPTI dropped or returned without timestamps
  std::vector<kernel_total> top;  // by time, descending, at most `top_count`
};

/// The summary of kernel intervals (ns); records without timestamps count as dropped.
[[nodiscard]] kernel_summary summarise_kernels(
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> kernels, size_t top_count);

}  // namespace benchmatrix
