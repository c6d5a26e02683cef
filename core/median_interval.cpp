#include "core/median_interval.hpp"

#include "core/repeat_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

namespace benchmatrix {

namespace {

std::vector<double> kept(const std::vector<double>& values, bool positive_only) {
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values)
    if (std::isfinite(v) && (!positive_only || v > 0)) out.push_back(v);
  return out;
}

/// numpy.median of a resample of `values` (drawn with replacement) using `scratch` as storage.
double resampled_median(const std::vector<double>& values, std::mt19937_64& generator,
                        std::vector<double>& scratch) {
  std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
  scratch.resize(values.size());
  for (double& v : scratch) v = values[pick(generator)];
  const size_t n = scratch.size(), mid = n / 2;
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(mid), scratch.end());
  if (n % 2) return scratch[mid];
  const double upper = scratch[mid];
  const double lower = *std::max_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

/// The (1-c)/2 and (1+c)/2 quantiles of `estimates` (np.percentile, linear interpolation).
std::pair<double, double> percentile_ends(const std::vector<double>& estimates, double confidence) {
  const double tail = (1 - confidence) / 2 * 100;
  return {percentile_of(estimates, tail), percentile_of(estimates, 100 - tail)};
}

}  // namespace

std::optional<median_interval> bootstrap_median(const std::vector<double>& values,
                                                double confidence, size_t resamples) {
  const auto sample = kept(values, false);
  if (sample.empty()) return std::nullopt;
  median_interval out;
  out.median = median_of(sample);
  out.confidence = confidence;
  out.count = sample.size();
  std::mt19937_64 generator(bootstrap_seed);
  std::vector<double> estimates(resamples), scratch;
  for (double& e : estimates) e = resampled_median(sample, generator, scratch);
  std::tie(out.low, out.high) = percentile_ends(estimates, confidence);
  out.low = std::min(out.low, out.median);
  out.high = std::max(out.high, out.median);
  return out;
}

std::optional<median_interval> bootstrap_ratio_of_medians(const std::vector<double>& baseline,
                                                          const std::vector<double>& experiment,
                                                          double confidence, size_t resamples) {
  const auto b = kept(baseline, true), e = kept(experiment, true);
  if (b.empty() || e.empty()) return std::nullopt;
  median_interval out;
  out.median = median_of(b) / median_of(e);
  out.confidence = confidence;
  out.count = std::min(b.size(), e.size());
  std::mt19937_64 generator(bootstrap_seed);
  std::vector<double> estimates(resamples), scratch;
  for (double& ratio : estimates) {
    const double numerator = resampled_median(b, generator, scratch);
    ratio = numerator / resampled_median(e, generator, scratch);
  }
  std::tie(out.low, out.high) = percentile_ends(estimates, confidence);
  out.low = std::min(out.low, out.median);
  out.high = std::max(out.high, out.median);
  return out;
}

bool interval_excludes(const median_interval& interval, double value) {
  return value < interval.low || value > interval.high;
}

}  // namespace benchmatrix
