// The CPUs this process may run on (sched_getaffinity: what taskset, numactl or a cgroup cpuset
// allowed), as the kernel's cpulist text ("0-3,8"). Timings taken under `taskset -c 0` are not
// comparable with unpinned ones; records and run_context.json carry the list so a comparison can
// tell.
#pragma once

#include <string>
#include <vector>

namespace benchmatrix {

/// This process's CPUs, ascending; empty when sched_getaffinity fails.
[[nodiscard]] std::vector<int> cpu_affinity();

/// `cpus` (ascending) in cpulist form: runs of consecutive CPUs as "a-b", joined by commas;
/// "" for none. {0, 1, 2, 3, 8} -> "0-3,8".
[[nodiscard]] std::string cpu_list_text(const std::vector<int>& cpus);

/// cpu_list_text(cpu_affinity()), or "unknown" when it cannot be read.
[[nodiscard]] std::string cpu_affinity_text();

}  // namespace benchmatrix
