#include "output/mann_whitney.hpp"

#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace benchmatrix {

namespace {

using uint128 = unsigned __int128;

/// C(m+n, m) when it and the intermediate products fit 128 bits; 0 otherwise.
uint128 arrangements(long long m, long long n) {
  const long long small = std::min(m, n), large = std::max(m, n);
  uint128 c = 1;  // C(large + i, i) after step i
  for (long long i = 1; i <= small; ++i) {
    const auto factor = static_cast<uint128>(large + i);
    if (c > ~uint128{0} / factor) return 0;
    // exact: C(large+i-1, i-1) * (large+i) = i * C(large+i, i)
    c = c * factor / static_cast<uint128>(i);
  }
  return c;
}

/// Average ranks (1-based) of the pooled values, and sum(t^3 - t) over the groups of ties.
struct ranking {
  std::vector<double> ranks;  // in the order of the pooled values
  double tie_term = 0;
  bool ties = false;
};

ranking rank_pooled(const std::vector<double>& pooled) {
  std::vector<size_t> order(pooled.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return pooled[a] < pooled[b]; });
  ranking r;
  r.ranks.resize(pooled.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;
    while (j < order.size() && pooled[order[j]] == pooled[order[i]]) ++j;
    const double average = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k) r.ranks[order[k]] = average;
    const double t = static_cast<double>(j - i);
    if (j - i > 1) r.ties = true;
    r.tie_term += t * t * t - t;
    i = j;
  }
  return r;
}

}  // namespace

double mann_whitney_exact_cdf(long long k, long long m, long long n) {
  const uint128 total = arrangements(m, n);
  if (total == 0) return -1.0;
  if (k < 0) return 0.0;
  if (k >= m * n) return 1.0;
  // Coefficients of prod_{i=1..s} (1 - q^(l+i)) / (1 - q^i) up to q^k, s = min(m, n), l = max:
  // after step i they are those of the Gaussian binomial [l+i choose i]_q, the number of
  // arrangements of i values among l+i with each U. Arithmetic modulo 2^128 is exact here: the
  // final (and every step's) coefficients are below C(m+n, m), which fits.
  const long long small = std::min(m, n), large = std::max(m, n);
  std::vector<uint128> c(static_cast<size_t>(k) + 1, 0);
  c[0] = 1;
  for (long long i = 1; i <= small; ++i) {
    for (long long d = k; d >= large + i; --d) c[d] -= c[d - large - i];  // times (1 - q^(l+i))
    for (long long d = i; d <= k; ++d) c[d] += c[d - i];                  // over (1 - q^i)
  }
  uint128 below = 0;
  for (const uint128 count : c) below += count;
  return static_cast<double>(static_cast<long double>(below) / static_cast<long double>(total));
}

mann_whitney_result mann_whitney_u_test(std::span<const double> x, std::span<const double> y) {
  if (x.empty() || y.empty())
    throw std::invalid_argument("the Mann-Whitney U test needs at least one value per sample");
  std::vector<double> pooled(x.begin(), x.end());
  pooled.insert(pooled.end(), y.begin(), y.end());
  for (const double v : pooled)
    if (!std::isfinite(v))
      throw std::invalid_argument("the Mann-Whitney U test got a non-finite value");
  const auto n1 = static_cast<double>(x.size()), n2 = static_cast<double>(y.size());
  const ranking r = rank_pooled(pooled);
  double r1 = 0;
  for (size_t i = 0; i < x.size(); ++i) r1 += r.ranks[i];
  mann_whitney_result result;
  result.u1 = r1 - n1 * (n1 + 1) / 2;
  const double u = std::max(result.u1, n1 * n2 - result.u1);

  if ((x.size() <= 8 || y.size() <= 8) && !r.ties) {
    // sf(U) = P(U' >= U) = P(U' <= n1*n2 - U) by symmetry; U is an integer without ties
    const double cdf = mann_whitney_exact_cdf(static_cast<long long>(std::llround(n1 * n2 - u)),
                                              static_cast<long long>(x.size()),
                                              static_cast<long long>(y.size()));
    if (cdf >= 0) {
      result.method = mann_whitney_method::exact;
      result.p_value = std::clamp(2.0 * cdf, 0.0, 1.0);
      return result;
    }
  }
  result.method = mann_whitney_method::asymptotic;
  const double n = n1 + n2;
  const double s = std::sqrt(n1 * n2 / 12.0 * ((n + 1) - r.tie_term / (n * (n - 1))));
  if (!(s > 0)) {  // every value tied: z = -0.5 / 0 = -inf, sf = 1
    result.p_value = 1.0;
    return result;
  }
  const double z = (u - n1 * n2 / 2.0 - 0.5) / s;
  const boost::math::normal_distribution<double> normal;
  result.p_value = std::clamp(2.0 * boost::math::cdf(boost::math::complement(normal, z)), 0.0, 1.0);
  return result;
}

}  // namespace benchmatrix
