// NVIDIA's management library (NVML, libnvidia-ml.so.1, installed with the driver) loaded at run time
// with dlopen: what one GPU's clocks, clock event (throttle) reasons, temperature, power,
// utilization and compute processes are right now. The build needs no GPU, no driver and no NVML
// header (the few types it uses are declared in nvml_library.cpp); on a host without the driver
// every reading says why it is empty instead of failing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace benchmatrix {

/// One process with a compute context on the GPU (NVML's pids are the host's: in a container with
/// its own pid namespace none of them is getpid()).
struct gpu_process {
  unsigned pid = 0;
  std::optional<double> used_memory_mib;  // MiB; none where NVML cannot say (NVML_VALUE_NOT_AVAILABLE)
};

/// One GPU as NVML sees it now. Each figure is empty when NVML could not read it; `unread` then
/// names it with NVML's error ("power_w: Not Supported").
struct gpu_reading {
  std::string unavailable;  // non-empty: nothing was read, and this says why
  std::string name;         // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;   // as NVML writes it: "00000000:1B:00.0"
  std::optional<unsigned> sm_clock_mhz, sm_clock_max_mhz;
  std::optional<unsigned> memory_clock_mhz, memory_clock_max_mhz;
  std::optional<uint64_t> clock_event_reasons;  // NVML's bit mask; see clock_event_reason_names
  std::optional<unsigned> temperature_c;        // GPU core, degrees Celsius
  std::optional<double> power_w, power_limit_w; // draw and enforced limit, watts
  std::optional<unsigned> utilization_gpu_percent;     // time a kernel ran, over NVML's last
  std::optional<unsigned> utilization_memory_percent;  // sample period (1/6 s to 1 s)
  std::optional<std::vector<gpu_process>> compute_processes;
  std::vector<std::pair<std::string, std::string>> unread;  // (figure, NVML's error)
};

/// The names of the bits set in an NVML clock event (throttle) reason mask, in bit order, as
/// snake_case forms of NVML's nvmlClocksEventReason* names ("gpu_idle", "sw_power_cap",
/// "hw_slowdown", "sw_thermal_slowdown", ...); a bit NVML does not define is "bit_<n>".
[[nodiscard]] std::vector<std::string> clock_event_reason_names(uint64_t reasons);

/// The reasons in `reasons` that mean the GPU lowers its clocks for power or heat (power cap,
/// hardware slowdown, thermal slowdowns, power brake), as clock_event_reason_names writes them;
/// idle, application clocks, sync boost and display clocks are not among them.
[[nodiscard]] std::vector<std::string> thermal_or_power_reason_names(uint64_t reasons);

/// Why NVML cannot be used in this process ("libnvidia-ml.so.1 not found: <dlerror>", "nvmlInit_v2
/// failed: Driver Not Loaded", ...); nullopt when it can. Loads and initialises NVML on the first
/// call (once per process; later calls return the same answer).
[[nodiscard]] std::optional<std::string> nvml_unavailable_reason();

/// The GPU at this PCI bus id ("00000000:1B:00.0" or "0000:1b:00.0": NVML's forms). Never throws:
/// when NVML or the GPU cannot be reached, `unavailable` says why.
[[nodiscard]] gpu_reading read_gpu_by_pci_bus_id(const std::string& pci_bus_id);

/// Every GPU NVML sees, in its (PCI) order; one element with `unavailable` set when NVML cannot be
/// used. Never throws.
[[nodiscard]] std::vector<gpu_reading> read_all_gpus();

}  // namespace benchmatrix
