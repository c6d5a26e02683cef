#include "core/noise_verdict.hpp"

#include "core/repeat_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace benchmatrix {
namespace {

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string process_list(const machine_snapshot& snapshot) {
  std::vector<std::string> items;
  for (const auto& p : *snapshot.gpu.compute_processes) {
    if (p.pid == snapshot.own_pid) continue;
    items.push_back("pid " + std::to_string(p.pid) +
                    (p.used_memory_mib ? " " + fixed(*p.used_memory_mib, 0) + " MiB" : ""));
  }
  return joined(items);
}

struct findings {
  std::vector<std::string> noisy, unjudged;
};

void judge_spread(const std::vector<double>& per_iter_time, const std::string& name,
                  findings& out) {
  const auto counted = counted_repeats(per_iter_time);
  if (counted.size() < noise_minimum_counted_repeats) {
    out.unjudged.push_back("only " + std::to_string(counted.size()) +
                           " counted repeat(s) of " + name + ": at least " +
                           std::to_string(noise_minimum_counted_repeats) +
                           " are needed to judge their spread");
    return;
  }
  const double median = median_of(counted);
  const double spread = (percentile_of(counted, 90) - percentile_of(counted, 10)) / median;
  if (!(spread <= noise_maximum_repeat_spread))  // NaN (median 0) counts as noisy too
    out.noisy.push_back("repeats spread " + fixed(spread * 100, 1) +
                        "% of their median (p90 - p10 of " + std::to_string(counted.size()) +
                        " counted " + name + " repeats; noisy above " +
                        fixed(noise_maximum_repeat_spread * 100, 0) + "%)");
}

void judge_gpu(const machine_snapshot& start, const machine_snapshot& end, findings& out) {
  if (!start.uses_gpu) return;  // a CPU run: no GPU to disturb it
  for (const auto* s : {&start, &end})
    if (!s->gpu.unavailable.empty()) {
      out.unjudged.push_back("GPU state not read: " + s->gpu.unavailable);
      return;
    }
  if (start.gpu.sm_clock_mhz && end.gpu.sm_clock_mhz &&
      *end.gpu.sm_clock_mhz < *start.gpu.sm_clock_mhz * (1 - noise_maximum_sm_clock_drop))
    out.noisy.push_back("SM clock fell from " + std::to_string(*start.gpu.sm_clock_mhz) + " to " +
                        std::to_string(*end.gpu.sm_clock_mhz) +
                        " MHz between the first and the last repeat");
  for (const auto& [s, when] : {std::pair{&start, "start"}, std::pair{&end, "end"}}) {
    const gpu_reading& gpu = s->gpu;
    if (gpu.clock_event_reasons) {
      const auto slowdowns = thermal_or_power_reason_names(*gpu.clock_event_reasons);
      const bool below_max = !gpu.sm_clock_mhz || !gpu.sm_clock_max_mhz ||
                             *gpu.sm_clock_mhz < *gpu.sm_clock_max_mhz;
      if (!slowdowns.empty() && below_max)
        out.noisy.push_back(
            "SM clock " + (gpu.sm_clock_mhz ? std::to_string(*gpu.sm_clock_mhz) : "(unread)") +
            " of " + (gpu.sm_clock_max_mhz ? std::to_string(*gpu.sm_clock_max_mhz) : "(unread)") +
            " MHz at the " + when + ", lowered for " + joined(slowdowns));
    }
    if (const size_t others = other_gpu_process_count(*s); others > 0)
      out.noisy.push_back(std::to_string(others) + " other process(es) on the GPU at the " + when +
                          " (" + process_list(*s) + ")");
  }
}

void judge_host(const machine_snapshot& start, const machine_snapshot& end, findings& out) {
  if (const auto shares = cpu_shares_between(start.host, end.host);
      shares && shares->steal > noise_maximum_host_steal)
    out.noisy.push_back("the hypervisor stole " + fixed(shares->steal * 100, 1) +
                        "% of the host's CPU time during the repeats (/proc/stat steal; noisy "
                        "above " + fixed(noise_maximum_host_steal * 100, 0) + "%)");
  if (start.host.speed_probe_ms > 0 && end.host.speed_probe_ms > 0) {
    const double change = end.host.speed_probe_ms / start.host.speed_probe_ms - 1;
    if (std::abs(change) > noise_maximum_host_speed_change)
      out.noisy.push_back("the host CPU ran " + fixed(std::abs(change) * 100, 0) + "% " +
                          (change > 0 ? "slower" : "faster") +
                          " at the end than at the start (speed probe " +
                          fixed(start.host.speed_probe_ms, 2) + " -> " +
                          fixed(end.host.speed_probe_ms, 2) + " ms; noisy beyond " +
                          fixed(noise_maximum_host_speed_change * 100, 0) + "%)");
  }
  // The higher of the two 1-minute loads: one line however many snapshots saw it.
  const machine_snapshot* loaded = nullptr;
  for (const auto* s : {&start, &end})
    if (s->host.load_average_1m &&
        (!loaded || *s->host.load_average_1m > *loaded->host.load_average_1m))
      loaded = s;
  if (!loaded) {
    out.unjudged.push_back("host load not read: " + start.host.load_unavailable);
    return;
  }
  const host_state& host = loaded->host;
  if (host.online_cpus > 0 && *host.load_average_1m > host.online_cpus)
    out.noisy.push_back("host load average " + fixed(*host.load_average_1m, 2) +
                        " (1 minute) at the " + (loaded == &start ? "start" : "end") +
                        " above its " + std::to_string(host.online_cpus) + " online CPUs");
}

}  // namespace

noise_verdict judge_noise(const std::vector<double>& per_iter_time, const machine_snapshot& start,
                          const machine_snapshot& end,
                          const std::vector<double>* baseline_per_iter_time) {
  findings found;
  judge_spread(per_iter_time, "per_iter_time", found);
  if (baseline_per_iter_time) judge_spread(*baseline_per_iter_time, "baseline_per_iter_time", found);
  judge_gpu(start, end, found);
  judge_host(start, end, found);
  const bool spread_unjudged = counted_repeats(per_iter_time).size() < noise_minimum_counted_repeats;
  noise_verdict verdict;
  verdict.verdict = !found.noisy.empty() ? "noisy" : spread_unjudged ? "unknown" : "quiet";
  verdict.reasons = std::move(found.noisy);
  verdict.reasons.insert(verdict.reasons.end(), found.unjudged.begin(), found.unjudged.end());
  return verdict;
}

json_value noise_verdict_json(const noise_verdict& noise, json_allocator& a) {
  json_value out(rapidjson::kObjectType);
  out.AddMember("verdict", json_value(noise.verdict.c_str(), a), a);
  json_value reasons(rapidjson::kArrayType);
  for (const auto& reason : noise.reasons) reasons.PushBack(json_value(reason.c_str(), a), a);
  out.AddMember("reasons", reasons, a);
  return out;
}

noise_verdict parse_noise_verdict(const json_value& value, const std::string& key) {
  const auto fail = [&](const std::string& what) {
    throw std::runtime_error("'" + key + "': expected " + what);
  };
  if (!value.IsObject()) fail("an object {\"verdict\": ..., \"reasons\": [...]}");
  noise_verdict noise;
  const auto verdict = value.FindMember("verdict");
  if (verdict == value.MemberEnd() || !verdict->value.IsString())
    fail("a string \"verdict\" (quiet, noisy or unknown)");
  noise.verdict.assign(verdict->value.GetString(), verdict->value.GetStringLength());
  if (noise.verdict != "quiet" && noise.verdict != "noisy" && noise.verdict != "unknown")
    fail("\"verdict\" quiet, noisy or unknown, found '" + noise.verdict + "'");
  const auto reasons = value.FindMember("reasons");
  if (reasons == value.MemberEnd() || !reasons->value.IsArray())
    fail("a list \"reasons\" of strings");
  for (const auto& reason : reasons->value.GetArray()) {
    if (!reason.IsString()) fail("\"reasons\" to hold only strings");
    noise.reasons.emplace_back(reason.GetString(), reason.GetStringLength());
  }
  return noise;
}

}  // namespace benchmatrix
