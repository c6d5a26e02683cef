#include "profiler/kernel_summary.hpp"

#include <algorithm>
#include <map>

namespace benchmatrix {

kernel_summary summarise_kernels(
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> kernels, size_t top_count) {
  kernel_summary summary;
  std::map<std::string, kernel_total> by_name;
  std::vector<std::pair<int64_t, int64_t>> intervals;
  for (auto& [name, interval] : kernels) {
    const auto [start, end] = interval;
    if (start == 0 || end == 0 || end < start) {  // no timestamp: CUPTI lacked device memory
      ++summary.dropped;
      continue;
    }
    ++summary.kernels;
    summary.kernel_time_ns += end - start;
    auto& total = by_name[name];
    total.name = name;
    ++total.calls;
    total.time_ns += end - start;
    intervals.emplace_back(start, end);
  }
  std::sort(intervals.begin(), intervals.end());
  int64_t covered_until = 0;
  for (const auto& [start, end] : intervals) {
    if (start >= covered_until) {
      summary.busy_time_ns += end - start;
    } else if (end > covered_until) {
      summary.busy_time_ns += end - covered_until;
    }
    covered_until = std::max(covered_until, end);
  }
  for (auto& [name, total] : by_name) summary.top.push_back(std::move(total));
  std::sort(summary.top.begin(), summary.top.end(),
            [](const kernel_total& a, const kernel_total& b) { return a.time_ns > b.time_ns; });
  if (summary.top.size() > top_count) summary.top.resize(top_count);
  return summary;
}

}  // namespace benchmatrix
