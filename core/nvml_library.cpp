#include "core/nvml_library.hpp"

#include <dlfcn.h>

#include <array>
#include <cstring>

namespace benchmatrix {
namespace {

// --- The small, stable part of NVML's C ABI this file uses. Names, values and layouts are those of
// NVIDIA's nvml.h (CUDA toolkit, include/nvml.h; unchanged since NVML 11 for everything here), so
// the build needs neither the header nor the library.
using nvml_return = int;  // nvmlReturn_t
constexpr nvml_return nvml_success = 0;               // NVML_SUCCESS
constexpr nvml_return nvml_insufficient_size = 7;     // NVML_ERROR_INSUFFICIENT_SIZE
using nvml_device = struct nvml_device_opaque*;       // nvmlDevice_t
constexpr int nvml_clock_sm = 1;                      // NVML_CLOCK_SM (nvmlClockType_t)
constexpr int nvml_clock_memory = 2;                  // NVML_CLOCK_MEM
constexpr int nvml_temperature_gpu = 0;               // NVML_TEMPERATURE_GPU
constexpr unsigned long long nvml_value_not_available = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
struct nvml_utilization {                             // nvmlUtilization_t
  unsigned int gpu, memory;                           // percent
};
struct nvml_process_info {  // nvmlProcessInfo_v2_t: what the _v2 and _v3 process queries fill
  unsigned int pid;
  unsigned long long used_gpu_memory;  // bytes
  unsigned int gpu_instance_id, compute_instance_id;
};
struct nvml_pci_info {  // nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3)
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_sub_system_id;
  char bus_id[32];  // "00000000:1B:00.0"
};

// The clock event reason bits (nvml.h's nvmlClocksEventReason*, formerly
// nvmlClocksThrottleReason*), with the snake_case names the records use.
struct reason_bit {
  uint64_t bit;
  const char* name;
  bool thermal_or_power;  // the GPU lowers its clocks for power or heat
};
constexpr std::array<reason_bit, 9> reason_bits{{
    {0x1, "gpu_idle", false},
    {0x2, "applications_clocks_setting", false},
    {0x4, "sw_power_cap", true},
    {0x8, "hw_slowdown", true},
    {0x10, "sync_boost", false},
    {0x20, "sw_thermal_slowdown", true},
    {0x40, "hw_thermal_slowdown", true},
    {0x80, "hw_power_brake_slowdown", true},
    {0x100, "display_clock_setting", false},
}};

/// libnvidia-ml.so.1, opened and initialised once per process, with the functions this file calls.
class nvml {
public:
  static const nvml& instance() {
    static const nvml library;
    return library;
  }

  std::string unavailable;  // non-empty: NVML cannot be used, and why

  const char* (*error_string_fn)(nvml_return) = nullptr;
  nvml_return (*device_count)(unsigned*) = nullptr;
  nvml_return (*handle_by_index)(unsigned, nvml_device*) = nullptr;
  nvml_return (*handle_by_pci_bus_id)(const char*, nvml_device*) = nullptr;
  nvml_return (*name)(nvml_device, char*, unsigned) = nullptr;
  nvml_return (*pci_info)(nvml_device, nvml_pci_info*) = nullptr;
  nvml_return (*clock)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*max_clock)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*clock_event_reasons)(nvml_device, unsigned long long*) = nullptr;
  nvml_return (*temperature)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*power_usage)(nvml_device, unsigned*) = nullptr;         // milliwatts
  nvml_return (*power_limit)(nvml_device, unsigned*) = nullptr;         // milliwatts
  nvml_return (*utilization)(nvml_device, nvml_utilization*) = nullptr;
  nvml_return (*compute_processes)(nvml_device, unsigned*, nvml_process_info*) = nullptr;

  /// NVML's text for an error code ("Not Supported"), or the code itself.
  std::string error_text(nvml_return code) const {
    const char* text = error_string_fn ? error_string_fn(code) : nullptr;
    return text ? std::string(text) : "NVML error " + std::to_string(code);
  }

private:
  nvml() {
    // Never dlclose'd: NVML stays initialised for the life of the process.
    m_handle = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!m_handle) {
      const char* why = ::dlerror();
      unavailable = std::string("libnvidia-ml.so.1 not found: ") + (why ? why : "dlopen failed");
      return;
    }
    nvml_return (*init)() = nullptr;
    if (!find(init, "nvmlInit_v2")) return;
    find(error_string_fn, "nvmlErrorString");
    if (!find(device_count, "nvmlDeviceGetCount_v2") ||
        !find(handle_by_index, "nvmlDeviceGetHandleByIndex_v2") ||
        !find(handle_by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2"))
      return;
    find(name, "nvmlDeviceGetName");
    find(pci_info, "nvmlDeviceGetPciInfo_v3");
    find(clock, "nvmlDeviceGetClockInfo");
    find(max_clock, "nvmlDeviceGetMaxClockInfo");
    // The newer name first (drivers from 535 on); older drivers only have the throttle name.
    if (!find(clock_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
      find(clock_event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    find(temperature, "nvmlDeviceGetTemperature");
    find(power_usage, "nvmlDeviceGetPowerUsage");
    find(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    find(utilization, "nvmlDeviceGetUtilizationRates");
    if (!find(compute_processes, "nvmlDeviceGetComputeRunningProcesses_v3"))
      find(compute_processes, "nvmlDeviceGetComputeRunningProcesses_v2");
    unavailable.clear();
    if (const nvml_return status = init(); status != nvml_success)
      unavailable = "nvmlInit_v2 failed: " + error_text(status);
  }

  /// Looks up `symbol`; when it is missing, says so in `unavailable` (cleared again once the
  /// required ones are found) and returns false.
  template <typename Function> bool find(Function& function, const char* symbol) {
    function = reinterpret_cast<Function>(::dlsym(m_handle, symbol));
    if (!function) unavailable = std::string("libnvidia-ml.so.1 has no ") + symbol;
    return function != nullptr;
  }

  void* m_handle = nullptr;
};

/// Reads one figure: `call(&value)`; on an NVML error (or a function the driver lacks) the figure
/// stays empty and `unread` gets (key, NVML's text).
template <typename Value, typename Call>
std::optional<Value> read_figure(const nvml& library, gpu_reading& reading, const char* key,
                                 bool present, Call call) {
  if (!present) {
    reading.unread.emplace_back(key, "this driver's NVML cannot read it");
    return std::nullopt;
  }
  Value value{};
  if (const nvml_return status = call(&value); status != nvml_success) {
    reading.unread.emplace_back(key, library.error_text(status));
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<gpu_process>> read_processes(const nvml& library, nvml_device device,
                                                       gpu_reading& reading) {
  if (!library.compute_processes) {
    reading.unread.emplace_back("compute_processes", "this driver's NVML cannot read it");
    return std::nullopt;
  }
  std::vector<nvml_process_info> infos(16);
  nvml_return status = nvml_insufficient_size;
  unsigned count = 0;
  // The list can grow between the size query and the read: a few tries, each with room to spare.
  for (int attempt = 0; attempt < 4 && status == nvml_insufficient_size; ++attempt) {
    count = static_cast<unsigned>(infos.size());
    status = library.compute_processes(device, &count, infos.data());
    if (status == nvml_insufficient_size) infos.resize(count + 8);
  }
  if (status != nvml_success) {
    reading.unread.emplace_back("compute_processes", library.error_text(status));
    return std::nullopt;
  }
  std::vector<gpu_process> processes;
  for (unsigned i = 0; i < count && i < infos.size(); ++i) {
    gpu_process p;
    p.pid = infos[i].pid;
    if (infos[i].used_gpu_memory != nvml_value_not_available)
      p.used_memory_mib = static_cast<double>(infos[i].used_gpu_memory) / (1024.0 * 1024.0);
    processes.push_back(p);
  }
  return processes;
}

gpu_reading read_device(const nvml& library, nvml_device device, std::string pci_bus_id) {
  gpu_reading r;
  r.pci_bus_id = std::move(pci_bus_id);
  if (library.name) {
    char text[96] = {};  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
    if (const auto status = library.name(device, text, sizeof text); status == nvml_success)
      r.name = text;
    else
      r.unread.emplace_back("name", library.error_text(status));
  }
  if (r.pci_bus_id.empty() && library.pci_info) {
    // Room past nvmlPciInfo_t in case a driver's is larger than the layout declared above.
    union {
      nvml_pci_info info;
      char room[256];
    } pci = {};
    if (library.pci_info(device, &pci.info) == nvml_success)
      r.pci_bus_id.assign(pci.info.bus_id, strnlen(pci.info.bus_id, sizeof pci.info.bus_id));
  }
  const auto clock = [&](const char* key, int type, bool maximum) {
    const auto function = maximum ? library.max_clock : library.clock;
    return read_figure<unsigned>(library, r, key, function != nullptr,
                                 [&](unsigned* v) { return function(device, type, v); });
  };
  r.sm_clock_mhz = clock("sm_clock_mhz", nvml_clock_sm, false);
  r.sm_clock_max_mhz = clock("sm_clock_max_mhz", nvml_clock_sm, true);
  r.memory_clock_mhz = clock("memory_clock_mhz", nvml_clock_memory, false);
  r.memory_clock_max_mhz = clock("memory_clock_max_mhz", nvml_clock_memory, true);
  if (auto reasons = read_figure<unsigned long long>(
          library, r, "clock_event_reasons", library.clock_event_reasons != nullptr,
          [&](unsigned long long* v) { return library.clock_event_reasons(device, v); }))
    r.clock_event_reasons = *reasons;
  r.temperature_c = read_figure<unsigned>(
      library, r, "temperature_c", library.temperature != nullptr,
      [&](unsigned* v) { return library.temperature(device, nvml_temperature_gpu, v); });
  const auto watts = [&](const char* key, auto function) -> std::optional<double> {
    const auto milliwatts = read_figure<unsigned>(library, r, key, function != nullptr,
                                                  [&](unsigned* v) { return function(device, v); });
    if (!milliwatts) return std::nullopt;
    return *milliwatts / 1000.0;
  };
  r.power_w = watts("power_w", library.power_usage);
  r.power_limit_w = watts("power_limit_w", library.power_limit);
  if (auto use = read_figure<nvml_utilization>(
          library, r, "utilization", library.utilization != nullptr,
          [&](nvml_utilization* v) { return library.utilization(device, v); })) {
    r.utilization_gpu_percent = use->gpu;
    r.utilization_memory_percent = use->memory;
  }
  r.compute_processes = read_processes(library, device, r);
  return r;
}

gpu_reading unavailable_reading(std::string why) {
  gpu_reading r;
  r.unavailable = std::move(why);
  return r;
}

}  // namespace

std::vector<std::string> clock_event_reason_names(uint64_t reasons) {
  std::vector<std::string> names;
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t mask = uint64_t{1} << bit;
    if (!(reasons & mask)) continue;
    const char* name = nullptr;
    for (const auto& known : reason_bits)
      if (known.bit == mask) name = known.name;
    names.push_back(name ? std::string(name) : "bit_" + std::to_string(bit));
  }
  return names;
}

std::vector<std::string> thermal_or_power_reason_names(uint64_t reasons) {
  std::vector<std::string> names;
  for (const auto& known : reason_bits)
    if (known.thermal_or_power && (reasons & known.bit)) names.push_back(known.name);
  return names;
}

std::optional<std::string> nvml_unavailable_reason() {
  const nvml& library = nvml::instance();
  if (library.unavailable.empty()) return std::nullopt;
  return library.unavailable;
}

gpu_reading read_gpu_by_pci_bus_id(const std::string& pci_bus_id) {
  if (auto why = nvml_unavailable_reason()) return unavailable_reading(*why);
  const nvml& library = nvml::instance();
  nvml_device device = nullptr;
  if (const auto status = library.handle_by_pci_bus_id(pci_bus_id.c_str(), &device);
      status != nvml_success)
    return unavailable_reading("NVML finds no GPU at PCI bus id " + pci_bus_id + ": " +
                               library.error_text(status));
  return read_device(library, device, pci_bus_id);
}

std::vector<gpu_reading> read_all_gpus() {
  if (auto why = nvml_unavailable_reason()) return {unavailable_reading(*why)};
  const nvml& library = nvml::instance();
  unsigned count = 0;
  if (const auto status = library.device_count(&count); status != nvml_success)
    return {unavailable_reading("nvmlDeviceGetCount_v2 failed: " + library.error_text(status))};
  std::vector<gpu_reading> gpus;
  for (unsigned i = 0; i < count; ++i) {
    nvml_device device = nullptr;
    if (const auto status = library.handle_by_index(i, &device); status != nvml_success)
      gpus.push_back(unavailable_reading("GPU " + std::to_string(i) + ": " +
                                         library.error_text(status)));
    else
      gpus.push_back(read_device(library, device, ""));
  }
  return gpus;
}

}  // namespace benchmatrix
