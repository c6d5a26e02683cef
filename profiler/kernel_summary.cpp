#include "profiler/kernel_summary.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace benchmatrix {

kernel_summary summarise_activities(std::vector<device_activity> activities, size_t top_count) {
  kernel_summary summary;
  std::map<std::string, kernel_total> by_name;
  std::vector<std::pair<int64_t, int64_t>> intervals;
  for (auto& activity : activities) {
    const int64_t start = activity.start_ns, end = activity.end_ns;
    if (start == 0 || end == 0 || end < start) {  // no timestamp: CUPTI lacked device memory
      ++summary.dropped;
      continue;
    }
    intervals.emplace_back(start, end);
    if (activity.kind != device_activity_kind::kernel) {
      ++summary.memory_ops;
      summary.memory_op_time_ns += end - start;
      continue;
    }
    ++summary.kernels;
    summary.kernel_time_ns += end - start;
    auto& total = by_name[activity.name];
    if (total.name.empty()) total.name = std::move(activity.name);
    ++total.calls;
    total.time_ns += end - start;
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
