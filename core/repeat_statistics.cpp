#include "core/repeat_statistics.hpp"

#include <algorithm>
#include <cmath>

namespace benchmatrix {

size_t first_counted_repeat(size_t repeats, size_t warm_up) {
  if (repeats > warm_up) return warm_up;
  return repeats == 0 ? 0 : repeats - 1;
}

std::vector<double> counted_repeats(const std::vector<double>& per_repeat, size_t warm_up) {
  std::vector<double> out;
  for (size_t i = first_counted_repeat(per_repeat.size(), warm_up); i < per_repeat.size(); ++i)
    if (std::isfinite(per_repeat[i])) out.push_back(per_repeat[i]);
  return out;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double percentile_of(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const double index = p / 100.0 * static_cast<double>(values.size() - 1);
  const double below = std::floor(index);
  const double t = index - below;
  const auto lo = static_cast<size_t>(below);
  const size_t hi = std::min(lo + 1, values.size() - 1);
  const double a = values[lo], b = values[hi], diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;  // numpy's _lerp, exact at both ends
}

std::optional<repeat_statistics> summarize_repeats(const std::vector<double>& per_repeat,
                                                   size_t warm_up) {
  const auto counted = counted_repeats(per_repeat, warm_up);
  if (counted.empty()) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(counted.begin(), counted.end());
  return repeat_statistics{counted.size(), median_of(counted), *lo, *hi};
}

}  // namespace benchmatrix
