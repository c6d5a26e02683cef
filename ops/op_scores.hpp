// backend_bench's figures from its per-test records (torch-free). The rules (kernel_evals.md §2.8
// and §6, without BackendBench's flaws):
// - a test counts when the suite could run it (the aten reference ran): setup and reference errors
//   are counted apart, in `not_run`, and are no one's pass or failure;
// - an op is correct when it has counted tests and all of them passed (an op with none is n/a,
//   never "correct");
// - a test's speedup exists only when it passed and was timed; an op's speedup is the geometric
// mean
//   over its tests and exists only when the op is correct and every test was timed — a failed test
//   is a failure in every figure, never a speedup of 1.0;
// - overall: pass rate over counted tests, correctness over ops, geomean speedup over the ops that
//   have one (the count of ops without one is always shown next to it), perf@p = the fraction of
//   ops that are correct with a speedup above p (ops without a speedup count as misses);
// - nothing to average over gives n/a (nullopt), never NaN.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

struct op_test_record {
  std::string op, test, dtype;
  std::string status;            // pass | fail | error | fallback | crash | timeout |
                                 // compile_error | load_error | setup_error | reference_error
  std::optional<double> speedup; // pass + --perf only
};

struct op_score {
  std::string op;
  int tests = 0; // counted tests
  int passed = 0;
  int not_run = 0;                     // setup/reference errors
  std::map<std::string, int> statuses; // every status and its count
  [[nodiscard]] bool correct() const { return tests > 0 && passed == tests; }
  std::optional<double> geomean_speedup;
};

struct suite_score {
  std::vector<op_score> ops; // sorted by op name
  int tests = 0, passed = 0, not_run = 0, correct_ops = 0, ops_with_speedup = 0;
  std::optional<double> pass_rate;       // passed / tests
  std::optional<double> correctness;     // correct ops / ops with counted tests
  std::optional<double> geomean_speedup; // over ops_with_speedup
  std::optional<double> perf_at_p;       // with --perf only
};

[[nodiscard]] bool counted_status(const std::string& status);

/// `perf`: whether the run timed anything (else there is no speedup and no perf@p).
[[nodiscard]] suite_score score_suite(const std::vector<op_test_record>& records, bool perf,
                                      double p);

/// "0.8333" or "n/a"; speedups as "1.234x".
[[nodiscard]] std::string fraction_text(const std::optional<double>& value);
[[nodiscard]] std::string speedup_text(const std::optional<double>& value);

} // namespace benchmatrix
