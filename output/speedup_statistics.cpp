#include "output/speedup_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace benchmatrix {

namespace {

// numpy's pairwise_sum for doubles (numpy/_core/src/umath/loops_utils.h.src), block size 128.
double pairwise(const double* a, size_t n) {
  if (n < 8) {
    double sum = 0.;
    for (size_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= 128) {
    double r[8];
    for (size_t j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  size_t half = n / 2;
  half -= half % 8;
  return pairwise(a, half) + pairwise(a + half, n - half);
}

}  // namespace

double numpy_sum(const std::vector<double>& values) { return pairwise(values.data(), values.size()); }

datapoint mean_and_sample_std(const std::vector<double>& values) {
  const auto n = static_cast<double>(values.size());
  const double mean = numpy_sum(values) / n;
  if (values.size() < 2) return {mean, 0.0};
  std::vector<double> squares;
  squares.reserve(values.size());
  for (double v : values) squares.push_back((v - mean) * (v - mean));
  return {mean, std::sqrt(numpy_sum(squares) / (n - 1))};
}

std::optional<datapoint> exec_datapoint(const std::vector<double>& total_time, size_t skip) {
  if (total_time.size() <= skip) return std::nullopt;
  return mean_and_sample_std(std::vector<double>(total_time.begin() + static_cast<long>(skip),
                                                 total_time.end()));
}

std::optional<datapoint> compile_datapoint(const std::vector<double>& total_time) {
  if (total_time.size() <= 1) return std::nullopt;
  const std::vector<double> runs(total_time.begin() + 1, total_time.end());
  return datapoint{total_time[0] - numpy_sum(runs) / static_cast<double>(runs.size()), 0.0};
}

datapoint speedup_of(const datapoint& experiment, const datapoint& baseline) {
  const double rel_experiment = experiment.std / experiment.avg;
  const double rel_baseline = baseline.std / baseline.avg;
  const double speedup = baseline.avg / experiment.avg;
  return {speedup,
          std::sqrt(rel_experiment * rel_experiment + rel_baseline * rel_baseline) * speedup};
}

datapoint geomean_of(const std::vector<datapoint>& values) {
  std::vector<double> logs;
  double relative_squares = 0;  // Python's sum(): left to right
  for (const auto& v : values) {
    logs.push_back(std::log(v.avg));
    relative_squares += (v.std / v.avg) * (v.std / v.avg);
  }
  const double g = std::exp(numpy_sum(logs) / static_cast<double>(logs.size()));
  return {g, g / static_cast<double>(values.size()) * std::sqrt(relative_squares)};
}

double numpy_round(double x, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::nearbyint(x * scale) / scale;
}

double python_round(double x, int digits) {
  if (!std::isfinite(x)) return x;
  char text[400];
  std::snprintf(text, sizeof text, "%.*f", digits, x);  // glibc: exact, half to even
  return std::strtod(text, nullptr);
}

}  // namespace benchmatrix
