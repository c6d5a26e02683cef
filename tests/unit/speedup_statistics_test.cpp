// The statistics of the aggregate reports give numpy's and scipy's numbers (values below computed
// with numpy 2.4: np.std(ddof=1), np.percentile, exp(mean(log)) as scipy's gmean).
#include "output/speedup_statistics.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace benchmatrix;

TEST_CASE("mean and sample standard deviation (ddof=1; 0 for one sample)") {
  const auto p = mean_and_sample_std({0.10, 0.12, 0.11});
  CHECK(p.avg == doctest::Approx(0.11).epsilon(1e-15));
  CHECK(p.std == doctest::Approx(0.01).epsilon(1e-12));  // np.std([.1,.12,.11], ddof=1)
  CHECK(mean_and_sample_std({0.04}).std == 0.0);
  // numpy's pairwise summation: for 9+ values the order of additions differs from a plain loop
  std::vector<double> many;
  double sequential = 0;
  for (int i = 0; i < 20; ++i) {
    many.push_back(0.1 * (i + 1) * 7 / 7);
    sequential += many.back();
  }
  CHECK(numpy_sum(many) == 21.000000000000004);  // np.sum([0.1 * (i + 1) * 7 / 7 for i in range(20)])
  CHECK(sequential == 21.0);
}

TEST_CASE("exec and compile datapoints drop samples as the original") {
  CHECK_FALSE(exec_datapoint({1, 2, 3}, 3).has_value());  // nothing past the first 3
  const auto one = exec_datapoint({9, 2, 2, 0.5}, 3);
  REQUIRE(one);
  CHECK(one->avg == 0.5);
  CHECK(one->std == 0.0);
  CHECK(exec_datapoint({9, 2, 2, 0.5}, 0)->avg == doctest::Approx(3.375));
  CHECK_FALSE(compile_datapoint({1.0}).has_value());
  CHECK(compile_datapoint({9, 2, 2, 1, 1.1})->avg == doctest::Approx(9 - 1.525));
}

TEST_CASE("speedup with the error of a quotient; geomean with its error") {
  const auto s = speedup_of({0.05, 0.005}, {0.1, 0.02});
  CHECK(s.avg == doctest::Approx(2.0));
  CHECK(s.std == doctest::Approx(2.0 * std::sqrt(0.01 + 0.04)));
  const auto g = geomean_of({{2.0, 0.2}, {8.0, 0.4}});
  CHECK(g.avg == doctest::Approx(4.0));
  CHECK(g.std == doctest::Approx(4.0 / 2 * std::sqrt(0.01 + 0.0025)));
}

TEST_CASE("percentiles interpolate linearly as np.percentile") {
  CHECK(percentile_of({3, 1, 2}, 50) == 2);
  CHECK(percentile_of({1, 2}, 95) == doctest::Approx(1.95));
  CHECK(percentile_of({1, 2}, 5) == doctest::Approx(1.05));
  CHECK(percentile_of({1.0, 1.2, 5.0}, 95) == 4.619999999999999);  // np.percentile([1, 1.2, 5], 95)
  CHECK(percentile_of({7}, 5) == 7);
}

TEST_CASE("numpy's and Python's round") {
  CHECK(numpy_round(1.234567891234, 8) == 1.23456789);
  CHECK(python_round(1.234567895, 8) == 1.2345679);   // round(1.234567895, 8)
  CHECK(python_round(0.125, 2) == 0.12);              // half to even on the exact value
  CHECK(numpy_round(2.5, 0) == 2.0);
}
