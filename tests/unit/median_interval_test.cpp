// The median and its bootstrap interval: reproducible, honest about what it rests on, and it tells
// a real change (interval excludes 1) from noise (interval includes 1).
#include "core/median_interval.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace benchmatrix;

namespace {

std::vector<double> lognormal_sample(std::mt19937_64& g, size_t n, double median, double sigma) {
  std::lognormal_distribution<double> d(std::log(median), sigma);
  std::vector<double> out(n);
  for (double& v : out) v = d(g);
  return out;
}

}  // namespace

TEST_CASE("the point is numpy.median and the interval holds it; non-finite values do not count") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto m = bootstrap_median({3.0, 1.0, nan, 2.0, 10.0, 2.5});
  REQUIRE(m);
  CHECK(m->count == 5);
  CHECK(m->median == 2.5);
  CHECK(m->low <= m->median);
  CHECK(m->high >= m->median);
  CHECK(m->low >= 1.0);   // a bootstrap never leaves the sample's range
  CHECK(m->high <= 10.0);
  CHECK_FALSE(bootstrap_median({nan}).has_value());
  const auto one = bootstrap_median({4.0});
  REQUIRE(one);
  CHECK(one->low == 4.0);
  CHECK(one->high == 4.0);
}

TEST_CASE("the same values give the same interval (fixed seed)") {
  const std::vector<double> v{1.1, 0.9, 1.3, 1.0, 1.2, 0.95, 1.05};
  const auto a = bootstrap_median(v), b = bootstrap_median(v);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->low == b->low);
  CHECK(a->high == b->high);
}

TEST_CASE("the 95% interval of a median covers the true median about 95% of the time") {
  std::mt19937_64 g(7);
  int covered = 0;
  constexpr int trials = 400;
  for (int t = 0; t < trials; ++t) {
    const auto m = bootstrap_median(lognormal_sample(g, 15, 2.0, 0.2), 0.95, 1000);
    REQUIRE(m);
    covered += m->low <= 2.0 && 2.0 <= m->high;
  }
  // The percentile bootstrap of a median undercovers a little at n = 15; it must not be far off.
  CHECK(covered >= trials * 0.88);
  CHECK(covered <= trials * 0.995);
}

TEST_CASE("a 1.5x change is outside the ratio's interval; no change is inside it") {
  std::mt19937_64 g(11);
  const auto base = lognormal_sample(g, 9, 10.0, 0.05);
  const auto slower = lognormal_sample(g, 9, 15.0, 0.05);
  const auto same = lognormal_sample(g, 9, 10.0, 0.05);
  const auto changed = bootstrap_ratio_of_medians(base, slower);
  REQUIRE(changed);
  CHECK(changed->median == doctest::Approx(10.0 / 15.0).epsilon(0.05));
  CHECK(interval_excludes(*changed, 1.0));
  const auto unchanged = bootstrap_ratio_of_medians(base, same);
  REQUIRE(unchanged);
  CHECK_FALSE(interval_excludes(*unchanged, 1.0));
  CHECK(unchanged->count == 9);
  CHECK_FALSE(bootstrap_ratio_of_medians({1.0}, {0.0, -1.0}).has_value());
}
