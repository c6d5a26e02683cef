// The state of the machine around a measurement (issue 24): the host's load and CPUs, and the GPU's
// clocks, clock event reasons, temperature, power and other processes (through NVML, loaded at run
// time). The child takes one snapshot right before its first timed repeat and one right after its
// last, and writes both into its record as "machine_state" (machine_state_json); noise_verdict
// judges them. Torch-free: the child finds its GPU's PCI bus id and passes it in.
#pragma once

#include "core/nvml_library.hpp"
#include "core/python_json.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace benchmatrix {

/// The host's CPU time since boot, summed over its CPUs, from the "cpu" line of /proc/stat, in
/// clock ticks (USER_HZ, 100 per second on Linux). Two readings give the share of the host's CPU
/// time in between that was idle, or stolen by the hypervisor from this virtual machine (steal: a
/// shared VM's vCPU waiting for a physical one — what slows a launch-bound child's host thread
/// without any process here being busy).
struct host_cpu_ticks {
  uint64_t total = 0;  // user + nice + system + idle + iowait + irq + softirq + steal
  uint64_t idle = 0;   // idle + iowait
  uint64_t steal = 0;
};

struct host_state {
  std::optional<double> load_average_1m, load_average_5m, load_average_15m;  // /proc/loadavg
  std::string load_unavailable;  // non-empty: why the load averages are empty
  unsigned online_cpus = 0;      // sysconf(_SC_NPROCESSORS_ONLN): CPUs the host has online
  unsigned affinity_cpus = 0;    // CPUs this process may run on (sched_getaffinity); 0: unknown
  std::optional<std::string> omp_num_threads;  // OMP_NUM_THREADS as set; none when unset
  std::optional<host_cpu_ticks> cpu_ticks;     // none: /proc/stat unreadable (not Linux)
  std::optional<double> process_cpu_s;         // this process's user + system CPU time, seconds
  /// How fast one host CPU ran this thread: milliseconds for host_speed_probe_steps dependent
  /// integer multiply-adds, the fastest of host_speed_probe_runs (about 1-2 ms on a 3 GHz core).
  /// Launch-bound eager steps are timed by the host thread; where the host's clock moves (turbo
  /// budget shared with other tenants of a VM's physical socket, invisible to steal and load),
  /// this figure moves with it, so two records' probes say whether their hosts ran alike.
  double speed_probe_ms = 0;
};

inline constexpr uint64_t host_speed_probe_steps = 1u << 20;
inline constexpr int host_speed_probe_runs = 5;

/// Runs the probe now (host_state::speed_probe_ms). About 5-10 ms.
[[nodiscard]] double probe_host_speed_ms();

/// Between two host readings: the share of the host's CPU time (all CPUs) stolen by the hypervisor
/// and the share spent idle, as fractions in [0, 1]; none when either reading lacks its ticks or no
/// tick passed.
struct host_cpu_shares {
  double steal = 0;
  double idle = 0;
};
[[nodiscard]] std::optional<host_cpu_shares> cpu_shares_between(const host_state& start,
                                                                 const host_state& end);

/// The GPU a snapshot reads: its PCI bus id (NVML's form, "00000000:1B:00.0"), or why there is none
/// ("accelerator is cpu").
struct gpu_choice {
  std::string pci_bus_id;
  std::string unavailable;  // non-empty: read no GPU, and say this
};

struct machine_snapshot {
  double taken_at = 0;  // seconds since the epoch
  host_state host;
  gpu_reading gpu;            // its `unavailable` says why it is empty
  unsigned own_pid = 0;       // getpid(): left out of the GPU's other processes
  bool uses_gpu = false;      // this process has a context on the GPU (it is among its processes)
};

/// This host's load, CPUs and OMP_NUM_THREADS now. Never throws.
[[nodiscard]] host_state read_host_state();

/// The host and the chosen GPU now. `uses_gpu`: this process runs on that GPU (a child on cuda), so
/// one of NVML's processes is this one even where a pid namespace hides its pid. Never throws.
[[nodiscard]] machine_snapshot take_machine_snapshot(const gpu_choice& gpu, bool uses_gpu);

/// The GPU's compute processes that are not this process: all but the one with own_pid; where no
/// listed pid is own_pid but this process uses the GPU (a container's pid namespace: NVML's pids are
/// the host's), one of them is this one, so the count is one less than listed. 0 when unread.
[[nodiscard]] size_t other_gpu_process_count(const machine_snapshot& snapshot);

/// {"taken_at": s, "host": {...}, "gpu": {...}} (README.md, "machine_state"); the gpu object is
/// {"unavailable": "<why>"} when no GPU was read.
[[nodiscard]] json_value machine_snapshot_json(const machine_snapshot& snapshot, json_allocator& a);

/// One GPU's figures as machine_snapshot_json writes them, without this process's view of its
/// processes (for the parent's run_context: "compute_process_count" instead).
[[nodiscard]] json_value gpu_reading_json(const gpu_reading& gpu, json_allocator& a);

/// The host's figures as machine_snapshot_json writes them.
[[nodiscard]] json_value host_state_json(const host_state& host, json_allocator& a);

}  // namespace benchmatrix
