// The figures every report shows for a record beyond its raw timings (issue 24), read from the
// record's JSON in one place so that the summary table, aggregate, compare_runs and the HTML report
// agree: a time as a median with its bootstrap interval, a speedup with its interval and its kind
// (paired: one child alternating baseline and experiment, as stored in the record's "paired" key;
// unpaired: the ratio of two children's medians), the record's noise verdict ("noise") and the
// GPU-busy fraction of a --profile-cupti record, and the peak memory of a record's memory pass
// (worker/memory_pass.hpp) with the compression ratio and memory-regression rule built on it.
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

/// The peak memory a report compares (issue 26): the device's peak allocated bytes where the
/// record has them (metrics.peak_device_allocated_bytes, CUDA), else the host's peak RSS
/// (metrics.peak_host_rss_bytes, a CPU config), as core/repeat_statistics summarises the counted
/// repeats (repeat 0 left out unless it is the only one).
enum class peak_memory_kind { device_allocated, host_rss };
/// "device allocated", "host RSS".
[[nodiscard]] const char* peak_memory_kind_name(peak_memory_kind kind);
struct peak_memory_figure {
  peak_memory_kind kind = peak_memory_kind::device_allocated;
  repeat_statistics bytes;  // median, min, max over the counted repeats, in bytes
};
/// nullopt when the record has neither list (an error record, --no-memory-pass, older records) or
/// no counted finite value.
[[nodiscard]] std::optional<peak_memory_figure>
peak_memory_of(const results_record& record, size_t warm_up = default_warm_up_repeats);

/// The compression ratio of PyTorch's compiler dashboard: baseline (eager) peak ÷ the compiled
/// config's peak, medians of the two records' figures (> 1: the compiled config needs less).
/// nullopt when the figures are of different kinds (device against host) or a peak is 0.
[[nodiscard]] std::optional<double> compression_ratio(const peak_memory_figure& baseline,
                                                      const peak_memory_figure& compiled);
/// The dashboard's flag: a compression ratio below 0.9 (the compiled config needs > 11% more).
constexpr double low_compression_ratio = 0.9;

/// A peak-memory regression between two runs of one config: the new median is more than
/// `threshold` (default 10%) above the old one AND every counted repeat of the new run is above
/// every counted repeat of the old one (the increase is beyond the repeats' spread). Peaks of a
/// static-shape step repeat almost exactly (the caching allocator hands out the same blocks each
/// step), so the spread is usually nil and 10% is the tolerance for allocator rounding and host RSS
/// noise (glibc arenas, page cache of a loaded library); a real regression (a lost fusion, a second
/// copy of the weights) moves the peak by far more. The same rule flags an improvement (down).
enum class memory_change { none, regression, improvement };
[[nodiscard]] memory_change compare_peak_memory(const peak_memory_figure& old_run,
                                                const peak_memory_figure& new_run,
                                                double threshold = 0.10);

/// 1536 → "1.5 KiB", 3.2e9 → "2.98 GiB": binary units, 3 significant digits.
[[nodiscard]] std::string bytes_text(double bytes);

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
