// Which repeats of a record count for its timing statistics, and their median/min/max: the one rule
// the end-of-sweep summary table, html_report, compare_runs and result_analyzer's mean/std follow,
// so one record shows one median wherever it is read.
//
// Repeat 0 carries compilation, autotuning and cache warm-up (a compiled backend's first repeat is
// often many times the rest), so the first `warm_up` repeats (default 1, result_analyzer's
// values[1:]) are left out and the figures describe steady-state speed. A record with no more
// repeats than that keeps its last one: it is all there is, and a figure beats a blank. Values that
// are NaN or infinite (a repeat that could not be timed) never count.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace benchmatrix {

/// Leading repeats left out of the statistics by default (repeat 0: compilation and warm-up).
inline constexpr size_t default_warm_up_repeats = 1;

/// Index of the first counted repeat of `repeats`: `warm_up` when more repeats exist, else the
/// last one (0 for none).
[[nodiscard]] size_t first_counted_repeat(size_t repeats, size_t warm_up = default_warm_up_repeats);

/// The finite values from first_counted_repeat() on, in repeat order.
[[nodiscard]] std::vector<double> counted_repeats(const std::vector<double>& per_repeat,
                                                  size_t warm_up = default_warm_up_repeats);

/// numpy.median: the middle value, or the mean of the middle two. `values` must not be empty.
[[nodiscard]] double median_of(std::vector<double> values);

/// np.percentile(values, p) with the default linear interpolation; p in [0, 100], values not empty.
[[nodiscard]] double percentile_of(std::vector<double> values, double p);

struct repeat_statistics {
  size_t count = 0;  // repeats that counted
  double median = 0, min = 0, max = 0;  // in the unit of the values
};

/// Median, min and max over counted_repeats(); nullopt when none counts.
[[nodiscard]] std::optional<repeat_statistics>
summarize_repeats(const std::vector<double>& per_repeat, size_t warm_up = default_warm_up_repeats);

}  // namespace benchmatrix
