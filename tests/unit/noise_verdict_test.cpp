// The noise verdict of a record (issue 24): each finding that makes it noisy, the unknown case, the
// quiet case, and the verdict read back from a record.
#include "core/noise_verdict.hpp"
#include "core/results_record.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace benchmatrix;

namespace {

/// A quiet GPU run: 1980 MHz of 1980, no slowdown, only this process on the GPU, a light host.
machine_snapshot quiet_gpu_snapshot() {
  machine_snapshot s;
  s.own_pid = 4242;
  s.uses_gpu = true;
  s.host.load_average_1m = 1.5;
  s.host.load_average_5m = 1.0;
  s.host.load_average_15m = 0.5;
  s.host.online_cpus = 16;
  s.host.affinity_cpus = 16;
  s.gpu.name = "NVIDIA H100 80GB HBM3";
  s.gpu.pci_bus_id = "00000000:1B:00.0";
  s.gpu.sm_clock_mhz = 1980;
  s.gpu.sm_clock_max_mhz = 1980;
  s.gpu.clock_event_reasons = 0;
  s.gpu.compute_processes = std::vector<gpu_process>{{4242, 1024.0}};
  return s;
}

/// Ten repeats: a slow warm-up, then nine within 2% of 1 ms.
const std::vector<double> steady = {0.5, 1.000e-3, 1.010e-3, 0.995e-3, 1.005e-3, 1.002e-3,
                                    0.998e-3, 1.001e-3, 1.015e-3, 0.990e-3};

bool mentions(const noise_verdict& v, const std::string& text) {
  for (const auto& r : v.reasons)
    if (r.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("steady repeats on a quiet machine are quiet, with no reasons") {
  const auto s = quiet_gpu_snapshot();
  const auto v = judge_noise(steady, s, s);
  CHECK(v.verdict == "quiet");
  CHECK(v.reasons.empty());
}

TEST_CASE("repeats spread wider than 10% of their median are noisy") {
  auto spread = steady;
  spread[3] = 1.3e-3;  // counted: 1.000 .. 1.300 ms
  spread[5] = 0.8e-3;
  const auto s = quiet_gpu_snapshot();
  const auto v = judge_noise(spread, s, s);
  CHECK(v.verdict == "noisy");
  REQUIRE(v.reasons.size() == 1);
  CHECK(mentions(v, "repeats spread"));
  CHECK(mentions(v, "9 counted per_iter_time repeats"));
  // The warm-up repeat (0.5 s here) never counts toward the spread.
  CHECK(judge_noise(steady, s, s).verdict == "quiet");
}

TEST_CASE("a paired record is noisy when its baseline wanders, even if the experiment is flat") {
  // As measured on an H100: eager (the baseline) host-bound and wandering, cudagraphs flat.
  auto wandering = steady;
  wandering[4] = 2.1e-3;
  wandering[6] = 1.4e-3;
  const auto s = quiet_gpu_snapshot();
  const auto v = judge_noise(steady, s, s, &wandering);
  CHECK(v.verdict == "noisy");
  REQUIRE(v.reasons.size() == 1);
  CHECK(mentions(v, "9 counted baseline_per_iter_time repeats"));
  CHECK(judge_noise(steady, s, s, &steady).verdict == "quiet");
}

TEST_CASE("fewer than three counted repeats give unknown, unless something else is noisy") {
  const auto s = quiet_gpu_snapshot();
  const auto v = judge_noise({0.5, 1e-3, 1e-3}, s, s);  // two counted
  CHECK(v.verdict == "unknown");
  CHECK(mentions(v, "only 2 counted repeat(s)"));
  auto loaded = s;
  loaded.host.load_average_1m = 40;
  const auto noisy = judge_noise({0.5, 1e-3}, loaded, loaded);
  CHECK(noisy.verdict == "noisy");
  REQUIRE(noisy.reasons.size() == 2);
  CHECK(noisy.reasons[0].find("host load average 40.00") != std::string::npos);  // noisy first
  CHECK(noisy.reasons[1].find("only 1 counted") != std::string::npos);
}

TEST_CASE("an SM clock falling between start and end is noisy") {
  const auto start = quiet_gpu_snapshot();
  auto end = start;
  end.gpu.sm_clock_mhz = 1700;  // -14%
  const auto v = judge_noise(steady, start, end);
  CHECK(v.verdict == "noisy");
  CHECK(mentions(v, "SM clock fell from 1980 to 1700 MHz"));
  end.gpu.sm_clock_mhz = 1965;  // one boost step: not a fall
  CHECK(judge_noise(steady, start, end).verdict == "quiet");
}

TEST_CASE("a power or thermal slowdown below the maximum clock is noisy; idle is not") {
  auto start = quiet_gpu_snapshot();
  auto end = start;
  end.gpu.sm_clock_mhz = 1900;
  end.gpu.clock_event_reasons = 0x4 | 0x20;  // sw_power_cap, sw_thermal_slowdown
  const auto v = judge_noise(steady, start, end);
  CHECK(v.verdict == "noisy");
  CHECK(mentions(v, "SM clock 1900 of 1980 MHz at the end, lowered for sw_power_cap, "
                    "sw_thermal_slowdown"));
  // At its maximum clock a power cap lowers nothing.
  end.gpu.sm_clock_mhz = 1980;
  CHECK(judge_noise(steady, start, end).verdict == "quiet");
  // gpu_idle (0x1) and sync_boost (0x10) are not slowdowns for power or heat.
  end.gpu.sm_clock_mhz = 1950;
  end.gpu.clock_event_reasons = 0x1 | 0x10;
  CHECK(judge_noise(steady, start, end).verdict == "quiet");
}

TEST_CASE("other processes on the GPU are noisy; this process is not another") {
  auto start = quiet_gpu_snapshot();
  start.gpu.compute_processes->push_back({777, 2048.0});
  const auto v = judge_noise(steady, start, quiet_gpu_snapshot());
  CHECK(v.verdict == "noisy");
  CHECK(mentions(v, "1 other process(es) on the GPU at the start (pid 777 2048 MiB)"));
  // A container's pid namespace: NVML lists host pids, none of them ours; one is this process.
  auto hidden = quiet_gpu_snapshot();
  hidden.gpu.compute_processes = std::vector<gpu_process>{{91234, 1024.0}};
  CHECK(other_gpu_process_count(hidden) == 0);
  CHECK(judge_noise(steady, hidden, hidden).verdict == "quiet");
  hidden.gpu.compute_processes->push_back({91300, std::nullopt});
  CHECK(other_gpu_process_count(hidden) == 1);
  CHECK(judge_noise(steady, hidden, hidden).verdict == "noisy");
}

TEST_CASE("a host load above its online CPUs is noisy") {
  const auto start = quiet_gpu_snapshot();
  auto end = start;
  end.host.load_average_1m = 17.25;
  const auto v = judge_noise(steady, start, end);
  CHECK(v.verdict == "noisy");
  REQUIRE(v.reasons.size() == 1);
  CHECK(v.reasons[0] == "host load average 17.25 (1 minute) at the end above its 16 online CPUs");
}

TEST_CASE("a GPU run whose GPU could not be read says so; a CPU run has no GPU to judge") {
  auto start = quiet_gpu_snapshot();
  start.gpu = {};
  start.gpu.unavailable = "libnvidia-ml.so.1 not found: no such file";
  const auto v = judge_noise(steady, start, start);
  CHECK(v.verdict == "quiet");  // the spread and the host still judged
  REQUIRE(v.reasons.size() == 1);
  CHECK(v.reasons[0] == "GPU state not read: libnvidia-ml.so.1 not found: no such file");
  auto cpu = start;
  cpu.uses_gpu = false;
  cpu.gpu.unavailable = "accelerator is cpu";
  CHECK(judge_noise(steady, cpu, cpu).reasons.empty());
}

TEST_CASE("the verdict's JSON reads back; a record with a malformed noise is rejected") {
  json_document d;
  const noise_verdict v{"noisy", {"a", "b"}};
  const auto back = parse_noise_verdict(noise_verdict_json(v, d.GetAllocator()), "noise");
  CHECK(back.verdict == "noisy");
  CHECK(back.reasons == std::vector<std::string>{"a", "b"});

  const std::string head =
      R"({"model": {"suite_name": "torchbench", "model_name": "m"}, "experiment": )"
      R"({"accelerator": "cpu", "accelerator_model": "x", "xla": null, "xla_flags": null, )"
      R"("dynamo": null, "torch_xla2": null, "keep_model_data_on_cuda": false, "test": "eval", )"
      R"("batch_size": 1, "enable_functionalization": false}, "repeat": 2, )"
      R"("iterations_per_run": 1, "metrics": {"total_time": [1.0, 2.0]}, "timestamp": 1.0, )"
      R"("verification_code": "VERIFIER_SKIPPED")";
  const auto record = results_record::parse(
      head + R"(, "machine_state": {"start": {}, "end": {}}, )" +
          R"j("noise": {"verdict": "unknown", "reasons": ["only 1 counted repeat(s)"]}})j",
      "line 1");
  REQUIRE(record.noise());
  CHECK(record.noise()->verdict == "unknown");
  CHECK(record.noise()->reasons.size() == 1);
  CHECK(record.extra("machine_state") != nullptr);
  CHECK_FALSE(results_record::parse(head + "}", "line 1").noise());
  CHECK_THROWS_WITH_AS(
      results_record::parse(head + R"(, "noise": {"verdict": "fine", "reasons": []}})", "line 3"),
      "line 3: 'noise': expected \"verdict\" quiet, noisy or unknown, found 'fine'",
      std::runtime_error);
  CHECK_THROWS_AS(
      results_record::parse_lenient(head + R"(, "noise": {"verdict": "quiet"}})", "line 4"),
      std::runtime_error);
}

TEST_CASE("CPU time stolen by the hypervisor during the repeats is noisy") {
  auto start = quiet_gpu_snapshot();
  auto end = start;
  start.host.cpu_ticks = host_cpu_ticks{100000, 90000, 1000};
  end.host.cpu_ticks = host_cpu_ticks{101600, 91000, 1080};  // 80 of 1600 ticks stolen: 5%
  const auto v = judge_noise(steady, start, end);
  CHECK(v.verdict == "noisy");
  CHECK(mentions(v, "the hypervisor stole 5.0% of the host's CPU time"));
  end.host.cpu_ticks = host_cpu_ticks{101600, 91500, 1016};  // 1%: a VM's usual background
  CHECK(judge_noise(steady, start, end).verdict == "quiet");
  const auto shares = cpu_shares_between(start.host, end.host);
  REQUIRE(shares);
  CHECK(shares->steal == doctest::Approx(0.01));
  CHECK(shares->idle == doctest::Approx(1500.0 / 1600));
  end.host.cpu_ticks.reset();  // not Linux: nothing to judge, nothing claimed
  CHECK_FALSE(cpu_shares_between(start.host, end.host));
  CHECK(judge_noise(steady, start, end).verdict == "quiet");
}

TEST_CASE("a host CPU that changed speed during the repeats is noisy") {
  auto start = quiet_gpu_snapshot();
  auto end = start;
  start.host.speed_probe_ms = 1.40;
  end.host.speed_probe_ms = 1.75;  // 25% slower: the clock fell
  const auto v = judge_noise(steady, start, end);
  CHECK(v.verdict == "noisy");
  CHECK(mentions(v, "the host CPU ran 25% slower at the end than at the start (speed probe "
                    "1.40 -> 1.75 ms"));
  end.host.speed_probe_ms = 1.43;  // 2%: the probe's own spread
  CHECK(judge_noise(steady, start, end).verdict == "quiet");
  end.host.speed_probe_ms = 0;  // not probed (an old snapshot): nothing claimed
  CHECK(judge_noise(steady, start, end).verdict == "quiet");
}
