// The Mann-Whitney U test against scipy: every expected U1 and p-value below was printed by
// scipy 1.17.1, `scipy.stats.mannwhitneyu(x, y, alternative='two-sided')` (method='auto', the
// default, which is what output/mann_whitney.hpp follows), for the x and y of the same case.
#include "output/mann_whitney.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

using namespace benchmatrix;

namespace {

mann_whitney_result test(const std::vector<double>& x, const std::vector<double>& y) {
  return mann_whitney_u_test(x, y);
}

std::vector<double> arithmetic(double start, double step, int count) {
  std::vector<double> v;
  for (int i = 0; i < count; ++i) v.push_back(start + i * step);
  return v;
}

}  // namespace

TEST_CASE("exact distribution: no ties and a sample of at most 8 values") {
  // mannwhitneyu([1,2,3,4,5], [6,7,8,9,10]) -> (0.0, 0.007936507936507936): 2 / C(10, 5)
  auto r = test({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  CHECK(r.method == mann_whitney_method::exact);
  CHECK(r.u1 == 0.0);
  CHECK(r.p_value == doctest::Approx(0.007936507936507936).epsilon(1e-14));
  // mannwhitneyu([1.1,2.5,3.2,4.8,6.1], [1.9,2.2,3.9,5.0,5.5,7.3,8.8])
  //   -> (12.0, 0.4318181818181819)
  r = test({1.1, 2.5, 3.2, 4.8, 6.1}, {1.9, 2.2, 3.9, 5.0, 5.5, 7.3, 8.8});
  CHECK(r.method == mann_whitney_method::exact);
  CHECK(r.u1 == 12.0);
  CHECK(r.p_value == doctest::Approx(0.4318181818181819).epsilon(1e-14));
  // mannwhitneyu([0.5+i*0.37 for i in range(8)], [0.1+i*0.29 for i in range(20)])
  //   -> (51.0, 0.14997369779978476): exact although the second sample is large
  r = test(arithmetic(0.5, 0.37, 8), arithmetic(0.1, 0.29, 20));
  CHECK(r.method == mann_whitney_method::exact);
  CHECK(r.u1 == 51.0);
  CHECK(r.p_value == doctest::Approx(0.14997369779978476).epsilon(1e-13));
  // mannwhitneyu([1.0], [2.0]) -> (0.0, 1.0): 2 * P(U <= 0) = 2 * 1/2
  r = test({1.0}, {2.0});
  CHECK(r.method == mann_whitney_method::exact);
  CHECK(r.p_value == 1.0);
  // the symmetric statistic: swapping the samples gives U2 and the same p-value
  r = test({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  CHECK(r.u1 == 25.0);
  CHECK(r.p_value == doctest::Approx(0.007936507936507936).epsilon(1e-14));
}

TEST_CASE("normal approximation: both samples above 8 values, or ties") {
  // mannwhitneyu([10.0+0.1*i for i in range(9)], [10.35+0.1*i for i in range(10)])
  //   -> (15.0, 0.01601099081051716)
  auto r = test(arithmetic(10.0, 0.1, 9), arithmetic(10.35, 0.1, 10));
  CHECK(r.method == mann_whitney_method::asymptotic);
  CHECK(r.u1 == 15.0);
  CHECK(r.p_value == doctest::Approx(0.01601099081051716).epsilon(1e-12));
  // mannwhitneyu([1.0,2.0,2.0,3.0], [2.0,3.0,4.0,5.0]) -> (2.5, 0.1366582477381475): small, tied
  r = test({1.0, 2.0, 2.0, 3.0}, {2.0, 3.0, 4.0, 5.0});
  CHECK(r.method == mann_whitney_method::asymptotic);
  CHECK(r.u1 == 2.5);
  CHECK(r.p_value == doctest::Approx(0.1366582477381475).epsilon(1e-12));
  // mannwhitneyu([1,1,2,2,3,3,4,4,5,5], [3,3,4,4,5,5,6,6,7,7]) -> (18.0, 0.015856209681046226)
  r = test({1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, {3, 3, 4, 4, 5, 5, 6, 6, 7, 7});
  CHECK(r.u1 == 18.0);
  CHECK(r.p_value == doctest::Approx(0.015856209681046226).epsilon(1e-12));
  // mannwhitneyu([1.0]*6, [1.0]*6) -> (18.0, 1.0): zero variance
  r = test(std::vector<double>(6, 1.0), std::vector<double>(6, 1.0));
  CHECK(r.u1 == 18.0);
  CHECK(r.p_value == 1.0);
}

TEST_CASE("exact null distribution and its limits") {
  // P(U <= k) for m = n = 2: U takes 0,1,2,2,3,4 over the C(4,2) = 6 arrangements
  CHECK(mann_whitney_exact_cdf(0, 2, 2) == doctest::Approx(1.0 / 6));
  CHECK(mann_whitney_exact_cdf(2, 2, 2) == doctest::Approx(4.0 / 6));
  CHECK(mann_whitney_exact_cdf(4, 2, 2) == 1.0);
  CHECK(mann_whitney_exact_cdf(-1, 2, 2) == 0.0);
  // C(60, 30) fits 128 bits; C(300, 150) does not
  CHECK(mann_whitney_exact_cdf(0, 30, 30) > 0);
  CHECK(mann_whitney_exact_cdf(0, 150, 150) < 0);
}

TEST_CASE("bad samples are refused") {
  CHECK_THROWS_AS((void)test({}, {1.0}), std::invalid_argument);
  CHECK_THROWS_AS((void)test({1.0, std::nan("")}, {1.0}), std::invalid_argument);
}
