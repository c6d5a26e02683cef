// The figures every report shows for a record beyond its raw timings (issue 24), read from the
// record's JSON in one place so that the summary table, aggregate, compare_runs and the HTML report
// agree: a time as a median with its bootstrap interval, a speedup with its interval and its kind
// (paired: one child alternating baseline and experiment, as stored in the record's "paired" key;
// unpaired: the ratio of two children's medians), the record's noise verdict ("noise") and the
// GPU-busy fraction of a --profile-cupti record.
//
// Every interval is core/median_interval's (bootstrap, 95%, fixed seed): a time is bootstrap_median
// of the counted repeats (core/repeat_statistics: repeat 0 is warm-up), an unpaired speedup is
// bootstrap_ratio_of_medians of the two records' counted per_iter_time repeats, a paired speedup is
// the record's paired.speedup as stored. A speedup is a change only when its interval excludes 1.
#pragma once

#include "core/median_interval.hpp"
#include "core/repeat_statistics.hpp"
#include "core/results_record.hpp"

#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

/// How a speedup was measured.
enum class speedup_kind {
  paired,   // one child alternated baseline and experiment repeat by repeat (record key "paired")
  unpaired, // two children, run at different times: their medians' ratio
};
[[nodiscard]] const char* speedup_kind_name(speedup_kind kind); // "paired", "unpaired"

/// A speedup (baseline time / experiment time: > 1 means the experiment is faster) with its
/// interval.
struct speedup_figure {
  median_interval interval;
  speedup_kind kind = speedup_kind::unpaired;
};

/// What a speedup's interval says: a change only when it excludes 1.
enum class speedup_verdict { faster, slower, within_noise };
[[nodiscard]] speedup_verdict verdict_of(const median_interval& speedup);
/// "faster", "slower", "within noise".
[[nodiscard]] const char* speedup_verdict_name(speedup_verdict verdict);

/// The record's "paired" key: the backend it alternated with, the order, and paired.speedup.
struct paired_speedup {
  std::string baseline; // paired.baseline, e.g. "eager"
  std::string order;    // paired.order, e.g. "ABBA" ("" when absent)
  median_interval speedup;
};
/// nullopt when the record has no "paired" key. Throws std::runtime_error naming the key and what
/// was expected when it is there but not the contract's shape ({"baseline": str, "speedup":
/// {"median", "low", "high": numbers, "count": integer, ...}}).
[[nodiscard]] std::optional<paired_speedup> paired_of(const results_record& record);

/// The record's "noise" key: its verdict ("quiet", "noisy", "unknown") and one line per reason.
struct noise_figure {
  std::string verdict;
  std::vector<std::string> reasons;
};
/// nullopt when the record has none (records older than the key). Throws std::runtime_error
/// naming the key when it is not {"verdict": str, "reasons": [str, ...]}.
[[nodiscard]] std::optional<noise_figure> noise_of(const results_record& record);

/// GPU busy ÷ step time of a --profile-cupti record: the CUPTI pass's busy time per iteration over
/// the timed repeats' per_iter_time (bootstrap_ratio_of_medians of their counted repeats).
struct gpu_busy_figure {
  median_interval fraction;    // 0..1 (can exceed 1 by overlap of streams), with its interval
};
/// nullopt when metrics has no cupti_per_iter_busy_time_s (no --profile-cupti, or a CPU config).
[[nodiscard]] std::optional<gpu_busy_figure> gpu_busy_of(const results_record& record,
                                                         size_t warm_up = default_warm_up_repeats);

/// bootstrap_median of the counted repeats (core/repeat_statistics); nullopt when none is finite.
[[nodiscard]] std::optional<median_interval>
time_interval(const std::vector<double>& per_repeat, size_t warm_up = default_warm_up_repeats);

/// The unpaired speedup of two records' per-repeat per-iteration times: bootstrap_ratio_of_medians
/// of their counted repeats; nullopt when either has no positive finite counted value.
[[nodiscard]] std::optional<speedup_figure>
unpaired_speedup(const std::vector<double>& baseline_per_repeat,
                 const std::vector<double>& experiment_per_repeat,
                 size_t warm_up = default_warm_up_repeats);

/// "1.92 [1.85–2.01]": the median and its interval with `decimals` decimals.
[[nodiscard]] std::string interval_text(const median_interval& interval, int decimals);

} // namespace benchmatrix
