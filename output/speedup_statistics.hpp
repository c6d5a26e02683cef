// The statistics of PyTorch/XLA's aggregate.py (shared/reference/xla_runner.md §10), computed as
// numpy and scipy compute them so that reports match the original's digits: numpy's pairwise
// summation for means and variances, np.percentile's linear interpolation, the geometric mean as
// exp(mean(log)), and the two roundings the original mixes (numpy's for numpy floats, Python's for
// Python floats).
#pragma once

#include "core/repeat_statistics.hpp"  // percentile_of

#include <cstddef>
#include <optional>
#include <vector>

namespace benchmatrix {

/// A measured or derived value with its standard deviation (an absolute error, same unit as avg).
struct datapoint {
  double avg = 0;
  double std = 0;
};

/// numpy's pairwise sum (the order of additions of np.sum / np.mean over a float64 array).
[[nodiscard]] double numpy_sum(const std::vector<double>& values);

/// Mean and sample standard deviation (ddof=1; 0 for a single value) as np.average/np.std give
/// them. `values` must not be empty.
[[nodiscard]] datapoint mean_and_sample_std(const std::vector<double>& values);

/// The execution-time datapoint of a record's total_time samples (seconds): the samples after the
/// first `skip` (compilation and cache warm-up; the original skips 3), their mean and sample std.
/// nullopt when no sample is left.
[[nodiscard]] std::optional<datapoint> exec_datapoint(const std::vector<double>& total_time,
                                                      size_t skip);

/// The compile-time datapoint: total_time[0] - mean(total_time[1:]) with std 0; nullopt for fewer
/// than 2 samples.
[[nodiscard]] std::optional<datapoint> compile_datapoint(const std::vector<double>& total_time);

/// Speedup of `experiment` over `baseline` (baseline.avg / experiment.avg) with the error of a
/// quotient: speedup * sqrt((e.std/e.avg)^2 + (b.std/b.avg)^2).
[[nodiscard]] datapoint speedup_of(const datapoint& experiment, const datapoint& baseline);

/// Geometric mean of the avg values (scipy's gmean: exp of the mean of the logs) with the error
/// g/n * sqrt(sum((std/avg)^2)). `values` must not be empty.
[[nodiscard]] datapoint geomean_of(const std::vector<datapoint>& values);

/// round(x, digits) of a numpy float64: rint(x * 10^digits) / 10^digits.
[[nodiscard]] double numpy_round(double x, int digits);

/// round(x, digits) of a Python float: the correctly rounded decimal (half to even).
[[nodiscard]] double python_round(double x, int digits);

}  // namespace benchmatrix
