// assert_close (verifier/assert_close.hpp) on crafted tensors whose torch.testing.assert_close verdicts
// are pinned in tests/e2e/test_accuracy.py (CRAFTED, checked there against the pip torch).
#include <doctest/doctest.h>

#include "verifier/assert_close.hpp"

#include <cmath>
#include <limits>

namespace benchmatrix {
namespace {

bool close(std::vector<float> actual, std::vector<float> expected, close_tolerances t = {}) {
  return assert_close(torch::tensor(actual), torch::tensor(expected), t).passed;
}

TEST_CASE("assert_close: torch.testing's verdicts on the crafted cases") {
  const float e = 2.0f + 1.5e-5f;
  CHECK_FALSE(close({1, 2}, {1, e}));
  CHECK(close({1, 2}, {1, e}, {1e-5, 0.0}));
  CHECK(close({1, 2}, {1, e}, {0.0, 1e-3}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK_FALSE(close({nan}, {nan}));
  CHECK(close({inf}, {inf}));
}

TEST_CASE("assert_close: one tolerance overrides only its own default; errors and mismatch text") {
  // |1.5 - 1| = 0.5: rtol 0.6 alone passes (0.6 * 1 + 1e-5), atol alone 0.4 does not.
  CHECK(close({1.5f}, {1.0f}, {0.6, std::nullopt}));
  CHECK_FALSE(close({1.5f}, {1.0f}, {std::nullopt, 0.4}));
  const auto r = assert_close(c10::ivalue::Tuple::create({torch::tensor({1.0f}), torch::tensor({2.0f, 4.0f})}),
                              c10::ivalue::Tuple::create({torch::tensor({1.0f}), torch::tensor({2.0f, 5.0f})}),
                              {});
  CHECK_FALSE(r.passed);
  CHECK(r.max_abs_error == doctest::Approx(1.0));
  CHECK(r.max_rel_error == doctest::Approx(0.2));
  CHECK(r.tensors_compared == 2);
  CHECK(r.mismatch.find("output[1]") == 0);
  CHECK(r.mismatch.find("flat index 1: 4 vs baseline 5") != std::string::npos);
  // integers exact, dtype and shape must match
  CHECK_FALSE(assert_close(torch::tensor({3}), torch::tensor({4}), {}).passed);
  CHECK(default_close_tolerances(torch::kBFloat16) == std::pair{1.6e-2, 1e-5});
  CHECK_FALSE(assert_close(torch::tensor({1.0f}), torch::tensor({1.0}, torch::kDouble), {}).passed);
  CHECK_FALSE(assert_close(torch::ones({2}), torch::ones({3}), {}).passed);
}

TEST_CASE("assert_close: max rel error is torch.testing's |a - e| / |e|, inf where e is 0") {
  // torch.testing reports "Greatest relative difference: inf" for 0.5 against 0.
  const auto r = assert_close(torch::tensor({1.0f, 0.5f}), torch::tensor({2.0f, 0.0f}), {10.0, 1.0});
  CHECK(r.passed);
  CHECK(std::isinf(r.max_rel_error));
  CHECK(r.max_abs_error == doctest::Approx(1.0));
  // equal zeros are no error at all
  const auto zeros = assert_close(torch::tensor({0.0f, 4.0f}), torch::tensor({0.0f, 5.0f}), {});
  CHECK(zeros.max_rel_error == doctest::Approx(0.2));
}

}  // namespace
}  // namespace benchmatrix
