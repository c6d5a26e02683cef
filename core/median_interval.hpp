// A median with its confidence interval, the one statistic every comparison in the product reports
// (the summary table, aggregate, compare_runs, the HTML report, paired records): the point and its
// interval come from the same statistic, so a speedup is called a change only when its interval
// excludes 1.
//
// The intervals are percentile bootstraps (Efron): the statistic recomputed on `resamples` samples
// drawn with replacement, the interval between the (1-c)/2 and (1+c)/2 quantiles of those values.
// The generator is seeded with a fixed value, so one record gives the same interval on every
// machine and in every tool. A bootstrap of n values cannot be wider than their range: with few
// values (fewer than about 6) the interval says little, and `count` says how many it rests on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace benchmatrix {

/// Confidence of every interval the tools print, unless a caller asks for another.
inline constexpr double default_confidence = 0.95;
/// Bootstrap resamples: enough that the 2.5% and 97.5% quantiles move by less than a percent of
/// the interval between seeds (checked on lognormal samples of 5 to 50 values).
inline constexpr size_t default_resamples = 4000;
/// The generator's fixed seed (any constant: it makes intervals reproducible, not better).
inline constexpr uint64_t bootstrap_seed = 0x5eed'b007'57a9'1e55ULL;

struct median_interval {
  double median = 0;           // numpy.median of the values, in their unit
  double low = 0, high = 0;    // the interval's ends, same unit; low <= median <= high
  double confidence = default_confidence;
  size_t count = 0;            // how many values the figure rests on
};

/// The median of `values` and a bootstrap interval for it. Non-finite values are dropped first;
/// nullopt when none is left. One value gives a zero-width interval at that value.
[[nodiscard]] std::optional<median_interval>
bootstrap_median(const std::vector<double>& values, double confidence = default_confidence,
                 size_t resamples = default_resamples);

/// median(baseline) / median(experiment) — a speedup when the values are times — with an interval
/// from resampling each sample independently (two unpaired samples, e.g. two children's repeats).
/// Non-finite and non-positive values are dropped; nullopt when either sample is left empty.
/// `count` is the smaller sample's size.
[[nodiscard]] std::optional<median_interval>
bootstrap_ratio_of_medians(const std::vector<double>& baseline,
                           const std::vector<double>& experiment,
                           double confidence = default_confidence,
                           size_t resamples = default_resamples);

/// True when `value` lies outside [low, high]: the figure is a change at the interval's confidence.
[[nodiscard]] bool interval_excludes(const median_interval& interval, double value);

}  // namespace benchmatrix
