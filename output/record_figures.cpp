#include "output/record_figures.hpp"

#include <cmath>
#include <cstdio>
#include <iterator>
#include <utility>
#include <stdexcept>

namespace benchmatrix {
namespace {

std::runtime_error malformed(const std::string& key, const std::string& expected) {
  return std::runtime_error("record key '" + key + "' is not " + expected);
}

double number_member(const json_value& object, const char* name, const std::string& key) {
  const auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsNumber() || !std::isfinite(it->value.GetDouble()))
    throw malformed(key + "." + name, "a finite number");
  return it->value.GetDouble();
}

std::string string_member(const json_value& object, const char* name, const std::string& key,
                          bool required) {
  const auto it = object.FindMember(name);
  if (it == object.MemberEnd() || it->value.IsNull()) {
    if (required)
      throw malformed(key + "." + name, "a string");
    return "";
  }
  if (!it->value.IsString())
    throw malformed(key + "." + name, "a string");
  return {it->value.GetString(), it->value.GetStringLength()};
}

} // namespace

const char* speedup_kind_name(speedup_kind kind) {
  return kind == speedup_kind::paired ? "paired" : "unpaired";
}

speedup_verdict verdict_of(const median_interval& speedup) {
  if (!interval_excludes(speedup, 1.0))
    return speedup_verdict::within_noise;
  return speedup.median > 1 ? speedup_verdict::faster : speedup_verdict::slower;
}

const char* speedup_verdict_name(speedup_verdict verdict) {
  switch (verdict) {
  case speedup_verdict::faster:
    return "faster";
  case speedup_verdict::slower:
    return "slower";
  case speedup_verdict::within_noise:
    break;
  }
  return "within noise";
}

const char* peak_memory_kind_name(peak_memory_kind kind) {
  return kind == peak_memory_kind::device_allocated ? "device allocated" : "host RSS";
}

std::optional<peak_memory_figure> peak_memory_of(const results_record& record, size_t warm_up) {
  for (const auto& [key, kind] :
       {std::pair{"peak_device_allocated_bytes", peak_memory_kind::device_allocated},
        std::pair{"peak_host_rss_bytes", peak_memory_kind::host_rss}}) {
    const auto values = record.per_repeat(key);
    if (!values) continue;
    const auto statistics = summarize_repeats(*values, warm_up);
    if (!statistics) return std::nullopt;
    return peak_memory_figure{kind, *statistics};
  }
  return std::nullopt;
}

std::optional<double> compression_ratio(const peak_memory_figure& baseline,
                                        const peak_memory_figure& compiled) {
  if (baseline.kind != compiled.kind || !(baseline.bytes.median > 0) ||
      !(compiled.bytes.median > 0))
    return std::nullopt;
  return baseline.bytes.median / compiled.bytes.median;
}

memory_change compare_peak_memory(const peak_memory_figure& old_run,
                                  const peak_memory_figure& new_run, double threshold) {
  if (old_run.kind != new_run.kind) return memory_change::none;
  if (new_run.bytes.median > old_run.bytes.median * (1 + threshold) &&
      new_run.bytes.min > old_run.bytes.max)
    return memory_change::regression;
  if (old_run.bytes.median > new_run.bytes.median * (1 + threshold) &&
      old_run.bytes.min > new_run.bytes.max)
    return memory_change::improvement;
  return memory_change::none;
}

std::string bytes_text(double bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (std::fabs(bytes) >= 1024 && unit + 1 < std::size(units)) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.3g %s", bytes, units[unit]);
  return text;
}

std::optional<paired_speedup> paired_of(const results_record& record) {
  const json_value* paired = record.extra("paired");
  if (!paired || paired->IsNull())
    return std::nullopt;
  if (!paired->IsObject())
    throw malformed("paired", "an object");
  paired_speedup out;
  out.baseline = string_member(*paired, "baseline", "paired", true);
  out.order = string_member(*paired, "order", "paired", false);
  const auto speedup = paired->FindMember("speedup");
  if (speedup == paired->MemberEnd() || !speedup->value.IsObject())
    throw malformed("paired.speedup", "an object {\"median\", \"low\", \"high\", \"count\", ...}");
  const json_value& s = speedup->value;
  out.speedup.median = number_member(s, "median", "paired.speedup");
  out.speedup.low = number_member(s, "low", "paired.speedup");
  out.speedup.high = number_member(s, "high", "paired.speedup");
  if (!(out.speedup.low <= out.speedup.median && out.speedup.median <= out.speedup.high))
    throw malformed("paired.speedup", "low <= median <= high");
  if (const auto c = s.FindMember("confidence"); c != s.MemberEnd() && c->value.IsNumber())
    out.speedup.confidence = c->value.GetDouble();
  const auto count = s.FindMember("count");
  if (count == s.MemberEnd() || !count->value.IsUint64())
    throw malformed("paired.speedup.count", "a non-negative integer");
  out.speedup.count = static_cast<size_t>(count->value.GetUint64());
  return out;
}

std::optional<noise_figure> noise_of(const results_record& record) {
  const json_value* noise = record.extra("noise");
  if (!noise || noise->IsNull())
    return std::nullopt;
  if (!noise->IsObject())
    throw malformed("noise", "an object {\"verdict\", \"reasons\"}");
  noise_figure out;
  out.verdict = string_member(*noise, "verdict", "noise", true);
  if (const auto reasons = noise->FindMember("reasons"); reasons != noise->MemberEnd()) {
    if (!reasons->value.IsArray())
      throw malformed("noise.reasons", "a list of strings");
    for (const auto& reason : reasons->value.GetArray()) {
      if (!reason.IsString())
        throw malformed("noise.reasons", "a list of strings");
      out.reasons.emplace_back(reason.GetString(), reason.GetStringLength());
    }
  }
  return out;
}

std::optional<gpu_busy_figure> gpu_busy_of(const results_record& record, size_t warm_up) {
  const auto busy = record.per_repeat("cupti_per_iter_busy_time_s");
  if (!busy || busy->empty())
    return std::nullopt;
  // The CUPTI pass's GPU-busy time per iteration over the timed repeats' wall time per iteration.
  // Not over the CUPTI pass's own wall time (cupti_per_iter_time_s): activity tracing adds host
  // time to every launch (on an H100, hf_Bert under cudagraphs: 1.47 ms per iteration traced,
  // 1.16 ms timed), which would call a GPU-bound step 0.63 busy; kernel durations are not
  // stretched by it, so busy / timed wall is the fraction the user's figure spends on the GPU.
  const auto fraction = bootstrap_ratio_of_medians(
      counted_repeats(*busy, warm_up), counted_repeats(record.per_iter_seconds(), warm_up));
  if (!fraction)
    return std::nullopt;
  gpu_busy_figure out;
  out.fraction = *fraction;
  return out;
}

std::optional<median_interval> time_interval(const std::vector<double>& per_repeat,
                                             size_t warm_up) {
  return bootstrap_median(counted_repeats(per_repeat, warm_up));
}

std::optional<speedup_figure> unpaired_speedup(const std::vector<double>& baseline_per_repeat,
                                               const std::vector<double>& experiment_per_repeat,
                                               size_t warm_up) {
  const auto ratio = bootstrap_ratio_of_medians(counted_repeats(baseline_per_repeat, warm_up),
                                                counted_repeats(experiment_per_repeat, warm_up));
  if (!ratio)
    return std::nullopt;
  return speedup_figure{*ratio, speedup_kind::unpaired};
}

std::string interval_text(const median_interval& interval, int decimals) {
  char text[128];
  std::snprintf(text, sizeof text, "%.*f [%.*f–%.*f]", decimals, interval.median, decimals,
                interval.low, decimals, interval.high);
  return text;
}

} // namespace benchmatrix
