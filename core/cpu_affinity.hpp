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

/// Parses cpulist text ("0-3,8", as cpu_list_text writes it and the kernel prints it) into
/// ascending, distinct CPUs. Throws std::invalid_argument naming the text for anything else
/// (an empty list, a descending range, a negative or non-numeric entry).
[[nodiscard]] std::vector<int> parse_cpu_list(const std::string& text);

/// Restricts the calling thread, and the threads and processes it starts afterwards, to `cpus`:
/// called before a process starts its first thread, the whole process. Throws
/// std::runtime_error with the system's reason when the kernel refuses (a CPU outside the
/// cgroup's cpuset, say).
void set_cpu_affinity(const std::vector<int>& cpus);

/// `cpus` split into `jobs` contiguous shares as even as can be (the first ones one CPU larger):
/// what --compile-ahead's children and --devices' slots each run on. At most cpus.size() shares;
/// for `jobs` 0 or no CPUs, none.
[[nodiscard]] std::vector<std::vector<int>> cpu_shares(const std::vector<int>& cpus, size_t jobs);

/// cpu_list_text(cpu_affinity()), or "unknown" when it cannot be read.
[[nodiscard]] std::string cpu_affinity_text();

}  // namespace benchmatrix
