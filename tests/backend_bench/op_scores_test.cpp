// backend_bench's figures (ops/op_scores.hpp): failed tests are failures in every figure, never a
// speedup of 1.0; nothing to average gives n/a.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "ops/op_scores.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace benchmatrix;

namespace {
op_test_record rec(const std::string& op, const std::string& test, const std::string& status,
                   std::optional<double> speedup = std::nullopt) {
  return {op, test, "float32", status, speedup};
}
} // namespace

TEST_CASE("all passing and timed: geomeans per op and over ops") {
  const auto s = score_suite(
      {rec("a", "0", "pass", 2.0), rec("a", "1", "pass", 8.0), rec("b", "0", "pass", 1.0)}, true,
      1.0);
  REQUIRE(s.ops.size() == 2);
  CHECK(*s.ops[0].geomean_speedup == doctest::Approx(4.0));
  CHECK(*s.ops[1].geomean_speedup == doctest::Approx(1.0));
  CHECK(*s.geomean_speedup == doctest::Approx(2.0));
  CHECK(*s.pass_rate == 1.0);
  CHECK(*s.correctness == 1.0);
  CHECK(*s.perf_at_p == doctest::Approx(0.5)); // b's 1.0 is not above p = 1
}

TEST_CASE("a failed test removes its op's speedup instead of counting as 1.0") {
  const auto s = score_suite(
      {rec("a", "0", "pass", 4.0), rec("a", "1", "fail"), rec("b", "0", "pass", 0.5)}, true, 0.1);
  CHECK_FALSE(s.ops[0].correct());
  CHECK_FALSE(s.ops[0].geomean_speedup);
  CHECK(s.ops_with_speedup == 1);
  CHECK(*s.geomean_speedup == doctest::Approx(0.5));
  CHECK(*s.pass_rate == doctest::Approx(2.0 / 3));
  CHECK(*s.correctness == doctest::Approx(0.5));
  CHECK(*s.perf_at_p == doctest::Approx(0.5)); // the failed op is a miss
}

TEST_CASE("crashes and timeouts count as failures; suite problems count apart") {
  const auto s = score_suite({rec("a", "0", "crash"), rec("a", "1", "timeout"),
                              rec("b", "0", "reference_error"), rec("b", "1", "pass")},
                             false, 1.0);
  CHECK(s.tests == 3);
  CHECK(s.not_run == 1);
  CHECK(s.passed == 1);
  CHECK(s.correct_ops == 1);
  CHECK_FALSE(s.geomean_speedup); // not timed
  CHECK_FALSE(s.perf_at_p);
}

TEST_CASE("an empty run is n/a, never correct") {
  const auto s = score_suite({}, true, 1.0);
  CHECK_FALSE(s.pass_rate);
  CHECK_FALSE(s.correctness);
  CHECK_FALSE(s.geomean_speedup);
  CHECK_FALSE(s.perf_at_p);
  CHECK(fraction_text(s.pass_rate) == "n/a");
  CHECK(speedup_text(s.geomean_speedup) == "n/a");
  // An op whose only tests cannot run here has no counted test: not correct, not in correctness.
  const auto only_reference_errors = score_suite({rec("a", "0", "reference_error")}, false, 1.0);
  CHECK_FALSE(only_reference_errors.ops[0].correct());
  CHECK_FALSE(only_reference_errors.correctness);
}
