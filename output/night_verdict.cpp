#include "output/night_verdict.hpp"

#include "core/python_json.hpp"
#include "core/repeat_statistics.hpp"
#include "output/verification_codes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace benchmatrix {

namespace {

/// 1.4826: the MAD of a normal sample times this estimates its sigma.
constexpr double mad_to_sigma = 1.4826;

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100);
  return text;
}

std::string fixed3(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

/// The figure in "time" orientation: log of seconds, or log of 1/speedup (larger: slower).
double slowness(const timing_figure& f, double value) {
  return f.kind == figure_kind::seconds ? std::log(value) : -std::log(value);
}

/// Tonight's interval in slowness: [low, high] with low <= high.
std::pair<double, double> slowness_interval(const timing_figure& f) {
  const double a = slowness(f, f.interval.low), b = slowness(f, f.interval.high);
  return {std::min(a, b), std::max(a, b)};
}

bool ran(const night_state& s) {
  return s.result == night_state::outcome::ran;
}

/// The accuracy drift of tonight against the references, or "" when there is none: every figure
/// that drifted, "; "-separated (a perturbed kernel moves the error against float64 and the cosine
/// to eager together; a reader sees both, and which moved when only one did).
std::string accuracy_drift(const accuracy_figures& tonight,
                           const std::vector<night_state>& references,
                           const gate_options& options) {
  const auto check = [&](const char* name,
                         std::optional<double> accuracy_figures::*field) -> std::string {
    if (!(tonight.*field))
      return "";
    std::optional<double> worst;
    for (const auto& r : references)
      if (ran(r) && r.accuracy.*field)
        worst = std::max(worst.value_or(*(r.accuracy.*field)), *(r.accuracy.*field));
    if (!worst)
      return "";
    const double now = *(tonight.*field);
    const double limit = std::max(*worst * options.accuracy_margin, options.accuracy_floor);
    if (now <= limit)
      return "";
    return std::string(name) + " " + python_float_repr(now) + " > " +
           fixed3(options.accuracy_margin) + " x the reference nights' largest " +
           python_float_repr(*worst);
  };
  std::string drifts;
  for (auto [name, field] : {std::pair{"rmse_vs_fp64", &accuracy_figures::rmse_vs_fp64},
                             std::pair{"1 - cosine_similarity", &accuracy_figures::cosine_distance},
                             std::pair{"accuracy_max_abs_error", &accuracy_figures::max_abs_error}})
    if (auto drift = check(name, field); !drift.empty())
      drifts += (drifts.empty() ? "" : "; ") + drift;
  return drifts;
}

config_verdict judge_timing(const timing_figure& now, const std::vector<timing_figure>& nights,
                            const gate_options& options, bool single_baseline) {
  config_verdict v;
  timing_judgement j;
  j.tonight = now.interval;
  j.nights = nights.size();
  const auto [low, high] = slowness_interval(now);
  const double tonight_mid = slowness(now, now.interval.median);
  std::vector<double> logs;
  for (const auto& n : nights)
    logs.push_back(slowness(n, n.interval.median));
  const char* unit = now.kind == figure_kind::seconds ? " s" : "x speedup";
  if (single_baseline) {
    // One reference night, asked for: no between-night spread is known.
    const timing_figure& base = nights.back();
    j.against = "baseline";
    j.nights = 1;
    j.center = base.interval.median;
    j.allowed = options.baseline_min_change;
    const double base_mid = slowness(base, base.interval.median);
    const auto [base_low, base_high] = slowness_interval(base);
    j.ratio = std::exp(tonight_mid - base_mid);
    const double limit = std::log1p(options.baseline_min_change);
    const bool slower = low > base_high && tonight_mid - base_mid > limit;
    const bool faster = high < base_low && base_mid - tonight_mid > limit;
    v.result = slower ? gate_verdict::slower : faster ? gate_verdict::faster : gate_verdict::same;
    v.reason = "ratio " + fixed3(j.ratio) + " against one night (" +
               python_float_repr(base.interval.median) + unit + "); " +
               (slower || faster ? "intervals disjoint and beyond "
                                 : "needs disjoint intervals and a change beyond ") +
               percent(options.baseline_min_change);
    v.timing = j;
    return v;
  }
  if (nights.size() < options.min_history_nights) {
    // Too few nights to learn the noise from: the MAD of 2-4 values is mostly luck (of 3, it is
    // the smaller distance to the middle one), and one night says nothing about the next on a
    // busy machine. Not judged; an interleaved A/B run (--baseline-runner) can judge it.
    j.against = "history";
    j.center = nights.back().interval.median;
    j.ratio = std::exp(tonight_mid - slowness(nights.back(), nights.back().interval.median));
    v.timing = j;
    v.result = gate_verdict::too_noisy;
    v.reason = "too few nights to judge: " + std::to_string(nights.size()) + " of the " +
               std::to_string(options.min_history_nights) +
               " nights the noise is learnt from (ratio " + fixed3(j.ratio) +
               " against the latest)";
    return v;
  }
  const double center = median_of(logs);
  const double spread = scaled_mad(logs);
  j.against = "history";
  j.center = now.kind == figure_kind::seconds ? std::exp(center) : std::exp(-center);
  j.spread = std::expm1(spread);
  const double allowed = std::max(options.k * spread, std::log1p(options.min_change));
  j.allowed = std::expm1(allowed);
  j.ratio = std::exp(tonight_mid - center);
  v.timing = j;
  const std::string basis = std::to_string(nights.size()) + " nights: center " +
                            python_float_repr(j.center) + unit + ", spread " + percent(*j.spread);
  if (spread > std::log1p(options.max_spread)) {
    v.result = gate_verdict::too_noisy;
    v.reason = "too noisy to judge: the nights' spread " + percent(*j.spread) + " exceeds " +
               percent(options.max_spread) + " (" + basis + ")";
    return v;
  }
  const bool slower = low > center + allowed;
  const bool faster = high < center - allowed;
  v.result = slower ? gate_verdict::slower : faster ? gate_verdict::faster : gate_verdict::same;
  v.reason = "ratio " + fixed3(j.ratio) + " (interval " + fixed3(std::exp(low - center)) + "-" +
             fixed3(std::exp(high - center)) + ") against " + basis + "; a change needs the " +
             "whole interval beyond " + percent(j.allowed);
  return v;
}

} // namespace

const char* gate_verdict_name(gate_verdict v) {
  switch (v) {
  case gate_verdict::same:
    return "SAME";
  case gate_verdict::slower:
    return "SLOWER";
  case gate_verdict::faster:
    return "FASTER";
  case gate_verdict::too_noisy:
    return "TOO_NOISY";
  case gate_verdict::broken:
    return "BROKEN";
  case gate_verdict::fixed:
    return "FIXED";
  case gate_verdict::accuracy_drift:
    return "ACCURACY_DRIFT";
  case gate_verdict::new_config:
    return "NEW";
  case gate_verdict::missing:
    return "MISSING";
  case gate_verdict::not_timed:
    return "NOT_TIMED";
  case gate_verdict::other_machine:
    return "OTHER_MACHINE";
  case gate_verdict::both_failed:
    return "BOTH_FAILED";
  }
  return "?";
}

bool is_regression(gate_verdict v) {
  return v == gate_verdict::slower || v == gate_verdict::broken ||
         v == gate_verdict::accuracy_drift;
}

double scaled_mad(const std::vector<double>& values) {
  if (values.empty())
    return 0;
  const double center = median_of(values);
  std::vector<double> deviations;
  for (const double v : values)
    deviations.push_back(std::fabs(v - center));
  return mad_to_sigma * median_of(deviations);
}

config_verdict judge_config(const std::optional<night_state>& tonight,
                            const std::vector<night_state>& references, const gate_options& options,
                            bool single_baseline) {
  config_verdict v;
  if (!tonight) {
    v.result = gate_verdict::missing;
    v.reason = "in the reference night, not in tonight's";
    return v;
  }
  if (references.empty()) {
    v.result = gate_verdict::new_config;
    v.reason = "no reference night holds this config";
    return v;
  }
  const night_state& latest = references.back();
  // Errors and verification codes: against the latest reference night.
  if (!ran(*tonight) && !ran(latest)) {
    v.result = gate_verdict::both_failed;
    v.reason = tonight->detail;
    return v;
  }
  if (!ran(*tonight)) {
    v.result = gate_verdict::broken;
    v.reason = "tonight: " + tonight->detail;
    return v;
  }
  if (!ran(latest)) {
    v.result = gate_verdict::fixed;
    v.reason = "the reference night: " + latest.detail;
    return v;
  }
  const auto now_code = outcome_of_code(tonight->verification_code);
  const auto ref_code = outcome_of_code(latest.verification_code);
  const std::string codes = latest.verification_code + " -> " + tonight->verification_code;
  if (ref_code == verification_outcome::passed && now_code == verification_outcome::failed) {
    v.result = gate_verdict::broken;
    v.reason = "verification " + codes;
    return v;
  }
  if (const auto drift = accuracy_drift(tonight->accuracy, references, options); !drift.empty()) {
    v.result = gate_verdict::accuracy_drift;
    v.reason = drift;
    return v;
  }
  // Timings: the references with a figure of tonight's kind.
  std::vector<timing_figure> nights;
  if (tonight->timing)
    for (const auto& r : references)
      if (ran(r) && r.timing && r.timing->kind == tonight->timing->kind)
        nights.push_back(*r.timing);
  if (ref_code == verification_outcome::failed && now_code == verification_outcome::passed) {
    v.result = gate_verdict::fixed;
    v.reason = "verification " + codes;
    if (!nights.empty())
      v.timing = judge_timing(*tonight->timing, nights, options, single_baseline).timing;
    return v;
  }
  if (nights.empty()) {
    v.result = gate_verdict::not_timed;
    v.reason = tonight->timing ? "no reference night has a comparable timing"
                               : "tonight's record has no timings";
    return v;
  }
  // Keep the most recent `history_nights`.
  if (nights.size() > options.history_nights)
    nights.erase(nights.begin(),
                 nights.end() - static_cast<std::ptrdiff_t>(options.history_nights));
  return judge_timing(*tonight->timing, nights, options, single_baseline);
}

} // namespace benchmatrix
