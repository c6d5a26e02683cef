// The two-sided Mann-Whitney U test (Wilcoxon rank-sum) of two independent samples, as
// scipy.stats.mannwhitneyu(x, y, alternative='two-sided', method='auto') computes it (scipy 1.17,
// scipy/stats/_mannwhitneyu.py), so that a verdict can be checked against scipy's numbers:
// - U1 = R1 - n1(n1+1)/2 with R1 the sum of x's average ranks (ties get their mean rank); the
//   p-value is taken from U = max(U1, U2), U2 = n1*n2 - U1, doubled and clipped to 1;
// - method 'auto': the exact null distribution when there are no ties and either sample has at
//   most 8 values, else the normal approximation with tie correction and continuity correction:
//   z = (U - n1*n2/2 - 0.5) / sqrt(n1*n2/12 * ((n+1) - sum(t^3 - t) / (n(n-1)))), p = 2*sf(z);
// - the exact distribution is the count of rank arrangements per U value (the coefficients of the
//   Gaussian binomial [n1+n2 choose n1]_q), in exact 128-bit integers; sizes whose arrangement
//   count does not fit (the smaller sample at most 8 and the larger one beyond tens of thousands of
//   values) fall back to the normal approximation;
// - when every value is tied the approximation's variance is 0 and p is 1 (scipy: sf(-inf) * 2,
//   clipped).
#pragma once

#include <span>

namespace benchmatrix {

enum class mann_whitney_method { exact, asymptotic };

struct mann_whitney_result {
  double u1 = 0;       // U statistic of the first sample (scipy's `statistic`)
  double p_value = 1;  // two-sided, in [0, 1]
  mann_whitney_method method = mann_whitney_method::asymptotic;
};

/// Tests whether x and y come from the same distribution (two-sided). Throws std::invalid_argument
/// for an empty sample or a non-finite value (scipy would propagate NaN; a verdict must not).
[[nodiscard]] mann_whitney_result mann_whitney_u_test(std::span<const double> x,
                                                      std::span<const double> y);

/// P(U <= k) under the null hypothesis for samples of sizes m and n (no ties), or a negative value
/// when the arrangement count C(m+n, m) does not fit 128 bits. Exposed for tests.
[[nodiscard]] double mann_whitney_exact_cdf(long long k, long long m, long long n);

}  // namespace benchmatrix
