// The regression gate's verdict for one configuration: tonight's figure judged against the noise
// between earlier nights, not against the repeats inside one run (issue 27: on a busy machine most
// of the variance is between runs — another process, another core, another moment — so a test that
// treats one run's repeats as the whole noise calls every other config a change).
//
// Timing, against a history of nights (at least `min_history_nights`):
//   each night's figure is its per-iteration median (seconds; repeat 0 left out as
//   core/repeat_statistics says) or, when the records are paired (--paired-baseline), its paired
//   speedup; in log space, center = median of the nights, spread = 1.4826 × MAD (a robust sigma:
//   one wild night moves neither); the allowed change is max(k × spread, log(1 + min_change)).
//   SLOWER when tonight's whole bootstrap interval (core/median_interval) lies beyond
//   center + allowed (in the slower direction), FASTER when beyond center - allowed; else SAME.
//   TOO_NOISY when the spread itself exceeds log(1 + max_spread): the history cannot tell a change
//   from a bad night, and the gate says so instead of guessing.
//   Why the interval and not the median: tonight's own repeats can be as wild as the nights (a
//   dcgan night with repeats from 2 to 65 ms); only a change that survives both counts.
//   Why a minimum change: with 5-7 nights of a quiet config the MAD can be near zero by chance.
//   Fewer nights than min_history_nights: TOO_NOISY ("too few nights"), not a guess. On the 2-core
//   build machine consecutive nights of the same build differed up to 10x; the single-night rule
//   below called 14 of 56 such comparisons (7 pairs) SLOWER, and 3 nights' MAD 2 of 8.
// Timing, against a single night (--baseline DIR, --against-latest; also the interleaved A/B
//   confirmation runs): no spread between nights is known, so the rule is wider: SLOWER/FASTER
//   when the two intervals are disjoint and the ratio of medians is beyond 1 + baseline_min_change.
// Verification and errors (always, whatever the timing says):
//   BROKEN   tonight's record is an error or SKIP where the reference night ran, or its
//            verification failed where the reference's passed (PASS -> FAIL, ...);
//   FIXED    the reverse.
// Accuracy as figures (verification.rmse_vs_fp64, 1 - verification.cosine_similarity and
//   metrics.accuracy_max_abs_error, when the records hold them): ACCURACY_DRIFT when tonight's error
//   exceeds the largest of the reference nights × accuracy_margin and the absolute floor (a PASS ->
//   PASS drift is never seen by the codes); the reason names every figure that drifted.
//   Why the largest × a margin, not median + k × MAD as for timings: one build's error figures on
//   the CPU are deterministic (every control night of the fixtures holds the same bits), so their
//   MAD is 0 and a MAD rule would flag any change at all; the largest tolerates what the history
//   has shown (GPU nondeterminism, a change already accepted into it), the margin (2) a benign
//   reordering, while a perturbed kernel moves rmse_vs_fp64 2.6x and the cosine to eager from 1
//   (tests/e2e/fixtures/nights/night_11).
// NEW: no reference night holds the config. MISSING: the latest reference night holds it, tonight
// does not (the gate names it; exit 2).
#pragma once

#include "core/median_interval.hpp"

#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

/// The gate's tunables (regression_gate check's flags), with the defaults and why.
struct gate_options {
  size_t history_nights = 7;      // nights of history the noise floor is learnt from (a week)
  size_t min_history_nights = 5;  // fewer: TOO_NOISY (the MAD of 2-4 nights is mostly luck)
  double k = 3;                   // allowed change in robust sigmas (3: ~0.3% of quiet nights)
  double min_change = 0.05;       // smallest change called, as a fraction (5%)
  double max_spread = 0.25;       // nights' sigma above this fraction: TOO_NOISY
  double baseline_min_change = 0.10;  // single-night rule: intervals disjoint and beyond 10%
  double accuracy_margin = 2.0;   // error figures: tonight > this × the history's largest
  double accuracy_floor = 1e-9;   // error figures below this are never a drift (float noise)
};

/// The timing figure one night gives a config.
enum class figure_kind {
  seconds,  // per-iteration median: larger is slower
  speedup,  // paired speedup over the baseline backend: smaller is slower
};

struct timing_figure {
  figure_kind kind = figure_kind::seconds;
  median_interval interval;  // median and bootstrap interval (a history night needs the median)
};

/// Error figures of one night (absent: the record does not hold it). Larger is worse.
struct accuracy_figures {
  std::optional<double> rmse_vs_fp64;        // verification.rmse_vs_fp64
  std::optional<double> cosine_distance;     // 1 - verification.cosine_similarity
  std::optional<double> max_abs_error;       // metrics.accuracy_max_abs_error (--metrics accuracy)
};

/// What one night says about a config.
struct night_state {
  enum class outcome { ran, failed, skipped } result = outcome::ran;
  std::optional<timing_figure> timing;  // ran with timings
  std::string verification_code;        // "" when none
  accuracy_figures accuracy;
  std::string detail;                   // failed/skipped: the error's first line
};

enum class gate_verdict {
  same, slower, faster, too_noisy, broken, fixed, accuracy_drift, new_config, missing,
  not_timed,  // both ran but without comparable timings (--verify-only records, kinds differ)
  both_failed,
  other_machine  // tonight's machine has no history of the config; another machine's has
};
[[nodiscard]] const char* gate_verdict_name(gate_verdict v);  // "SLOWER", "TOO_NOISY", ...
/// slower, broken, accuracy_drift: the verdicts that fail the gate (exit 1).
[[nodiscard]] bool is_regression(gate_verdict v);

/// How the timing was judged and against what (log-space figures are turned back into ratios).
struct timing_judgement {
  std::string against;              // "history" or "baseline"
  size_t nights = 0;                // reference nights used
  double center = 0;                // history: exp(center) in the figure's unit; baseline: median
  std::optional<double> spread;     // history: the nights' robust sigma as a fraction
  double allowed = 0;               // the change that counts, as a fraction (0.05 = 5%)
  double ratio = 1;                 // tonight vs center as "time ratio": > 1 slower
  median_interval tonight;          // tonight's figure
};

struct config_verdict {
  gate_verdict result = gate_verdict::same;
  std::optional<timing_judgement> timing;
  std::string reason;  // one line a person reads
};

/// The verdict of tonight against `references`, oldest first (history nights, or one baseline
/// night). `single_baseline`: judge with the single-night rule even with many references.
[[nodiscard]] config_verdict judge_config(const std::optional<night_state>& tonight,
                                          const std::vector<night_state>& references,
                                          const gate_options& options,
                                          bool single_baseline = false);

/// Robust spread of `values`: 1.4826 × median(|x - median(x)|) (a normal sample's sigma).
[[nodiscard]] double scaled_mad(const std::vector<double>& values);

}  // namespace benchmatrix
