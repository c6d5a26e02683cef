#include "ops/op_scores.hpp"

#include <cmath>
#include <cstdio>

namespace benchmatrix {

bool counted_status(const std::string& status) {
  return status != "setup_error" && status != "reference_error";
}

suite_score score_suite(const std::vector<op_test_record>& records, bool perf, double p) {
  std::map<std::string, op_score> by_op;
  std::map<std::string, std::pair<double, int>> log_sums; // sum of log speedups, timed tests
  for (const auto& r : records) {
    auto& score = by_op[r.op];
    score.op = r.op;
    ++score.statuses[r.status];
    if (!counted_status(r.status)) {
      ++score.not_run;
      continue;
    }
    ++score.tests;
    if (r.status == "pass")
      ++score.passed;
    if (r.status == "pass" && r.speedup && *r.speedup > 0) {
      log_sums[r.op].first += std::log(*r.speedup);
      ++log_sums[r.op].second;
    }
  }
  suite_score suite;
  int ops_counted = 0, fast_ops = 0;
  double log_sum = 0;
  for (auto& [name, score] : by_op) {
    if (perf && score.correct() && log_sums[name].second == score.tests)
      score.geomean_speedup = std::exp(log_sums[name].first / score.tests);
    suite.tests += score.tests;
    suite.passed += score.passed;
    suite.not_run += score.not_run;
    if (score.tests > 0)
      ++ops_counted;
    if (score.correct())
      ++suite.correct_ops;
    if (score.geomean_speedup) {
      ++suite.ops_with_speedup;
      log_sum += std::log(*score.geomean_speedup);
      if (*score.geomean_speedup > p)
        ++fast_ops;
    }
    suite.ops.push_back(score);
  }
  if (suite.tests > 0)
    suite.pass_rate = static_cast<double>(suite.passed) / suite.tests;
  if (ops_counted > 0)
    suite.correctness = static_cast<double>(suite.correct_ops) / ops_counted;
  if (suite.ops_with_speedup > 0)
    suite.geomean_speedup = std::exp(log_sum / suite.ops_with_speedup);
  if (perf && ops_counted > 0)
    suite.perf_at_p = static_cast<double>(fast_ops) / ops_counted;
  return suite;
}

std::string fraction_text(const std::optional<double>& value) {
  if (!value)
    return "n/a";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4f", *value);
  return buffer;
}

std::string speedup_text(const std::optional<double>& value) {
  if (!value)
    return "n/a";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4gx", *value);
  return buffer;
}

} // namespace benchmatrix
