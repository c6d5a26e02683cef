// The machine state of a record (issue 24): the clock event reason bits NVML reports decoded to
// names, the host figures read from this machine, and a snapshot's JSON layout.
#include "core/machine_state.hpp"

#include <doctest/doctest.h>

using namespace benchmatrix;

TEST_CASE("clock event reason bits decode to NVML's names, unknown bits by number") {
  CHECK(clock_event_reason_names(0).empty());
  CHECK(clock_event_reason_names(0x1) == std::vector<std::string>{"gpu_idle"});
  CHECK(clock_event_reason_names(0x4 | 0x8 | 0x40) ==
        std::vector<std::string>{"sw_power_cap", "hw_slowdown", "hw_thermal_slowdown"});
  CHECK(clock_event_reason_names(0x2 | 0x10 | 0x20 | 0x80 | 0x100) ==
        std::vector<std::string>{"applications_clocks_setting", "sync_boost",
                                 "sw_thermal_slowdown", "hw_power_brake_slowdown",
                                 "display_clock_setting"});
  CHECK(clock_event_reason_names(0x200 | (uint64_t{1} << 40)) ==
        std::vector<std::string>{"bit_9", "bit_40"});
  // Only power and heat lower the clocks in a way that disturbs a measurement.
  CHECK(thermal_or_power_reason_names(0x1 | 0x2 | 0x10 | 0x100).empty());
  CHECK(thermal_or_power_reason_names(0x1 | 0x4 | 0x80) ==
        std::vector<std::string>{"sw_power_cap", "hw_power_brake_slowdown"});
}

TEST_CASE("the host figures are read from this machine") {
  const host_state host = read_host_state();
  CHECK(host.online_cpus >= 1);
  CHECK(host.affinity_cpus >= 1);
  CHECK(host.affinity_cpus <= host.online_cpus);
  REQUIRE(host.load_average_1m);  // Linux: /proc/loadavg
  CHECK(*host.load_average_1m >= 0);
  REQUIRE(host.cpu_ticks);  // Linux: /proc/stat
  CHECK(host.cpu_ticks->total >= host.cpu_ticks->idle + host.cpu_ticks->steal);
  REQUIRE(host.process_cpu_s);
  const host_state later = read_host_state();
  CHECK(later.cpu_ticks->total >= host.cpu_ticks->total);
  CHECK(*later.process_cpu_s >= *host.process_cpu_s);
  // 2^20 dependent multiply-adds take about a millisecond on any core of this decade: far from 0
  // (the chain was not optimised away) and far from a second.
  CHECK(host.speed_probe_ms > 0.05);
  CHECK(host.speed_probe_ms < 200);
}

TEST_CASE("a snapshot without a GPU says why; NVML's absence never throws") {
  const auto cpu = take_machine_snapshot({"", "accelerator is cpu"}, false);
  json_document d;
  const json_value json = machine_snapshot_json(cpu, d.GetAllocator());
  CHECK(to_python_json(json["gpu"]) == R"({"unavailable": "accelerator is cpu"})");
  CHECK(json["host"]["online_cpus"].GetUint() >= 1);
  CHECK(json["taken_at"].GetDouble() > 1.7e9);
  // Whether or not this host has a driver, reading a GPU that is not there is an answer.
  const auto missing = read_gpu_by_pci_bus_id("00000000:FF:1F.0");
  CHECK_FALSE(missing.unavailable.empty());
  if (const auto why = nvml_unavailable_reason())
    CHECK(missing.unavailable == *why);
}

TEST_CASE("a GPU snapshot lists other processes, not this one, with units in its keys") {
  machine_snapshot s;
  s.own_pid = 10;
  s.uses_gpu = true;
  s.gpu.name = "GPU";
  s.gpu.pci_bus_id = "00000000:1B:00.0";
  s.gpu.sm_clock_mhz = 1755;
  s.gpu.clock_event_reasons = 0x4;
  s.gpu.power_w = 350.5;
  s.gpu.compute_processes = std::vector<gpu_process>{{10, 900.0}, {11, std::nullopt}};
  s.gpu.unread = {{"temperature_c", "Not Supported"}};
  json_document d;
  const json_value json = machine_snapshot_json(s, d.GetAllocator());
  const json_value& gpu = json["gpu"];
  CHECK(gpu["sm_clock_mhz"].GetUint() == 1755);
  CHECK(gpu["sm_clock_max_mhz"].IsNull());
  CHECK(to_python_json(gpu["clock_event_reasons"]) == R"(["sw_power_cap"])");
  CHECK(gpu["power_w"].GetDouble() == 350.5);
  CHECK(to_python_json(gpu["other_processes"]) == R"([{"pid": 11, "used_memory_mib": null}])");
  CHECK(gpu["other_process_count"].GetUint() == 1);
  CHECK_FALSE(gpu.HasMember("other_processes_note"));
  CHECK(to_python_json(gpu["unread"]) == R"({"temperature_c": "Not Supported"})");
}
