#include "core/machine_state.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

namespace benchmatrix {
namespace {

std::optional<host_cpu_ticks> read_host_cpu_ticks() {
  std::ifstream stat("/proc/stat");
  std::string label;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      label != "cpu")
    return std::nullopt;
  host_cpu_ticks ticks;
  ticks.total = user + nice + system + idle + iowait + irq + softirq + steal;
  ticks.idle = idle + iowait;
  ticks.steal = steal;
  return ticks;
}

std::optional<double> read_process_cpu_seconds() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return std::nullopt;
  const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

double probe_host_speed_ms() {
  double fastest = 0;
  uint64_t chain = 0x853c49e6748fea9bULL;
  for (int run = 0; run < host_speed_probe_runs; ++run) {
    const auto started = std::chrono::steady_clock::now();
    // One dependent chain (each step needs the last): the time is latency-bound, set by the
    // core's clock rather than by how many instructions it can run in parallel. Knuth's MMIX LCG.
    for (uint64_t step = 0; step < host_speed_probe_steps; ++step)
      chain = chain * 6364136223846793005ULL + 1442695040888963407ULL;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    if (run == 0 || ms < fastest) fastest = ms;
  }
  static volatile uint64_t sink;  // keeps the chain from being optimised away
  sink = chain;
  return fastest;
}

std::optional<host_cpu_shares> cpu_shares_between(const host_state& start, const host_state& end) {
  if (!start.cpu_ticks || !end.cpu_ticks || end.cpu_ticks->total <= start.cpu_ticks->total)
    return std::nullopt;
  const double total = static_cast<double>(end.cpu_ticks->total - start.cpu_ticks->total);
  const auto share = [&](uint64_t from, uint64_t to) {
    return to >= from ? static_cast<double>(to - from) / total : 0.0;
  };
  return host_cpu_shares{share(start.cpu_ticks->steal, end.cpu_ticks->steal),
                         share(start.cpu_ticks->idle, end.cpu_ticks->idle)};
}

host_state read_host_state() {
  host_state host;
  std::ifstream loadavg("/proc/loadavg");
  double one = 0, five = 0, fifteen = 0;
  if (loadavg >> one >> five >> fifteen) {
    host.load_average_1m = one;
    host.load_average_5m = five;
    host.load_average_15m = fifteen;
  } else {
    host.load_unavailable = "cannot read /proc/loadavg";
  }
  if (const long online = ::sysconf(_SC_NPROCESSORS_ONLN); online > 0)
    host.online_cpus = static_cast<unsigned>(online);
  cpu_set_t affinity;
  CPU_ZERO(&affinity);
  if (::sched_getaffinity(0, sizeof affinity, &affinity) == 0)
    host.affinity_cpus = static_cast<unsigned>(CPU_COUNT(&affinity));
  if (const char* threads = std::getenv("OMP_NUM_THREADS")) host.omp_num_threads = threads;
  host.cpu_ticks = read_host_cpu_ticks();
  host.process_cpu_s = read_process_cpu_seconds();
  host.speed_probe_ms = probe_host_speed_ms();
  return host;
}

machine_snapshot take_machine_snapshot(const gpu_choice& gpu, bool uses_gpu) {
  machine_snapshot snapshot;
  snapshot.taken_at =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  snapshot.host = read_host_state();
  snapshot.own_pid = static_cast<unsigned>(::getpid());
  snapshot.uses_gpu = uses_gpu;
  if (!gpu.unavailable.empty())
    snapshot.gpu.unavailable = gpu.unavailable;
  else
    snapshot.gpu = read_gpu_by_pci_bus_id(gpu.pci_bus_id);
  return snapshot;
}

namespace {

bool lists_own_pid(const machine_snapshot& snapshot) {
  if (!snapshot.gpu.compute_processes) return false;
  for (const auto& p : *snapshot.gpu.compute_processes)
    if (p.pid == snapshot.own_pid) return true;
  return false;
}

template <typename Number> json_value optional_number(const std::optional<Number>& value) {
  return value ? json_value(*value) : json_value();
}

json_value text(const std::string& value, json_allocator& a) {
  return json_value(value.c_str(), static_cast<rapidjson::SizeType>(value.size()), a);
}

json_value process_json(const gpu_process& p, json_allocator& a) {
  json_value process(rapidjson::kObjectType);
  process.AddMember("pid", p.pid, a);
  process.AddMember("used_memory_mib", optional_number(p.used_memory_mib), a);
  return process;
}

/// The figures every GPU object has, in the order the README lists them.
json_value gpu_figures_json(const gpu_reading& gpu, json_allocator& a) {
  json_value out(rapidjson::kObjectType);
  if (!gpu.unavailable.empty()) {
    out.AddMember("unavailable", text(gpu.unavailable, a), a);
    return out;
  }
  out.AddMember("name", text(gpu.name, a), a);
  out.AddMember("pci_bus_id", text(gpu.pci_bus_id, a), a);
  out.AddMember("sm_clock_mhz", optional_number(gpu.sm_clock_mhz), a);
  out.AddMember("sm_clock_max_mhz", optional_number(gpu.sm_clock_max_mhz), a);
  out.AddMember("memory_clock_mhz", optional_number(gpu.memory_clock_mhz), a);
  out.AddMember("memory_clock_max_mhz", optional_number(gpu.memory_clock_max_mhz), a);
  json_value reasons;  // null when unread
  if (gpu.clock_event_reasons) {
    reasons.SetArray();
    for (const auto& name : clock_event_reason_names(*gpu.clock_event_reasons))
      reasons.PushBack(text(name, a), a);
  }
  out.AddMember("clock_event_reasons", reasons, a);
  out.AddMember("temperature_c", optional_number(gpu.temperature_c), a);
  out.AddMember("power_w", optional_number(gpu.power_w), a);
  out.AddMember("power_limit_w", optional_number(gpu.power_limit_w), a);
  out.AddMember("utilization_gpu_percent", optional_number(gpu.utilization_gpu_percent), a);
  out.AddMember("utilization_memory_percent", optional_number(gpu.utilization_memory_percent), a);
  return out;
}

json_value unread_json(const std::vector<std::pair<std::string, std::string>>& unread,
                       json_allocator& a) {
  json_value out(rapidjson::kObjectType);
  for (const auto& [key, why] : unread) out.AddMember(text(key, a), text(why, a), a);
  return out;
}

}  // namespace

size_t other_gpu_process_count(const machine_snapshot& snapshot) {
  if (!snapshot.gpu.compute_processes) return 0;
  const size_t listed = snapshot.gpu.compute_processes->size();
  if (lists_own_pid(snapshot) || (snapshot.uses_gpu && listed > 0)) return listed - 1;
  return listed;
}

json_value gpu_reading_json(const gpu_reading& gpu, json_allocator& a) {
  json_value out = gpu_figures_json(gpu, a);
  if (!gpu.unavailable.empty()) return out;
  out.AddMember("compute_process_count",
                optional_number(gpu.compute_processes
                                    ? std::optional<uint64_t>(gpu.compute_processes->size())
                                    : std::nullopt),
                a);
  if (!gpu.unread.empty()) out.AddMember("unread", unread_json(gpu.unread, a), a);
  return out;
}

json_value host_state_json(const host_state& host, json_allocator& a) {
  json_value out(rapidjson::kObjectType);
  out.AddMember("load_average_1m", optional_number(host.load_average_1m), a);
  out.AddMember("load_average_5m", optional_number(host.load_average_5m), a);
  out.AddMember("load_average_15m", optional_number(host.load_average_15m), a);
  out.AddMember("online_cpus", host.online_cpus, a);
  out.AddMember("affinity_cpus", host.affinity_cpus, a);
  out.AddMember("omp_num_threads",
                host.omp_num_threads ? text(*host.omp_num_threads, a) : json_value(), a);
  if (host.cpu_ticks) {
    json_value ticks(rapidjson::kObjectType);
    ticks.AddMember("total", host.cpu_ticks->total, a);
    ticks.AddMember("idle", host.cpu_ticks->idle, a);
    ticks.AddMember("steal", host.cpu_ticks->steal, a);
    out.AddMember("cpu_ticks", ticks, a);
  } else {
    out.AddMember("cpu_ticks", json_value(), a);
  }
  out.AddMember("process_cpu_s", optional_number(host.process_cpu_s), a);
  out.AddMember("speed_probe_ms", host.speed_probe_ms, a);
  if (!host.load_unavailable.empty()) {
    json_value unread(rapidjson::kObjectType);
    unread.AddMember("load_average", text(host.load_unavailable, a), a);
    out.AddMember("unread", unread, a);
  }
  return out;
}

json_value machine_snapshot_json(const machine_snapshot& snapshot, json_allocator& a) {
  json_value out(rapidjson::kObjectType);
  out.AddMember("taken_at", snapshot.taken_at, a);
  out.AddMember("host", host_state_json(snapshot.host, a), a);
  json_value gpu = gpu_figures_json(snapshot.gpu, a);
  if (snapshot.gpu.unavailable.empty()) {
    // Every compute process but this one; where no listed pid is this process's (a container's pid
    // namespace) all are listed and the note says one of them is this process.
    json_value others(rapidjson::kArrayType);
    const bool own_listed = lists_own_pid(snapshot);
    if (snapshot.gpu.compute_processes)
      for (const auto& p : *snapshot.gpu.compute_processes)
        if (p.pid != snapshot.own_pid) others.PushBack(process_json(p, a), a);
    gpu.AddMember("other_processes",
                  snapshot.gpu.compute_processes ? std::move(others) : json_value(), a);
    gpu.AddMember("other_process_count",
                  snapshot.gpu.compute_processes
                      ? json_value(static_cast<uint64_t>(other_gpu_process_count(snapshot)))
                      : json_value(),
                  a);
    if (snapshot.gpu.compute_processes && !own_listed && snapshot.uses_gpu &&
        !snapshot.gpu.compute_processes->empty())
      gpu.AddMember("other_processes_note",
                    text("this process (pid " + std::to_string(snapshot.own_pid) +
                             ") is not among NVML's pids (a container's pid namespace): one of "
                             "those listed is taken to be this process",
                         a),
                    a);
    if (!snapshot.gpu.unread.empty()) gpu.AddMember("unread", unread_json(snapshot.gpu.unread, a), a);
  }
  out.AddMember("gpu", gpu, a);
  return out;
}

}  // namespace benchmatrix
