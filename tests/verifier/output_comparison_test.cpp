// worst_output (verifier/output_comparison.hpp): its figures and which leaf it picks.
#include <doctest/doctest.h>

#include "verifier/output_comparison.hpp"

#include <cmath>

namespace benchmatrix {
namespace {

c10::IValue tuple(std::vector<c10::IValue> elements) {
  return c10::ivalue::Tuple::create(std::move(elements));
}

TEST_CASE("worst_output: identical all-zero leaves have cosine similarity 1, not 0") {
  // dlrm eval on the CPU at batch 2 gave all-zero outputs: cosine_similarity of two zero vectors
  // is 0 in torch, which read as "unrelated" next to max_abs_error 0 and PASS.
  const auto zeros = torch::zeros({2, 3}, torch::kBFloat16);
  const auto worst = worst_output(zeros, zeros.clone(), zeros.to(torch::kDouble));
  REQUIRE(worst);
  CHECK(worst->path == "output");
  CHECK(worst->max_abs_error == 0.0);
  CHECK(worst->cosine_similarity == 1.0);
}

TEST_CASE("worst_output: equal leaves with NaNs score 1; a zero against a non-zero leaf scores 0") {
  auto a = torch::tensor({1.0, std::nan(""), 2.0});
  CHECK(worst_output(a, a.clone(), c10::IValue())->cosine_similarity == 1.0);
  const auto zero = torch::zeros({3});
  CHECK(worst_output(zero, torch::ones({3}), c10::IValue())->cosine_similarity == 0.0);
  const auto x = torch::tensor({1.0, 2.0, 3.0});
  CHECK(worst_output(x, x * 2, c10::IValue())->cosine_similarity == doctest::Approx(1.0));
  CHECK(worst_output(x, -x, c10::IValue())->cosine_similarity == doctest::Approx(-1.0));
}

TEST_CASE("worst_output: paths in Python's indexing syntax, dict keys included") {
  c10::Dict<std::string, torch::Tensor> grads;
  grads.insert("fc.weight.grad", torch::ones({2}));
  const auto ref = tuple({torch::zeros({2}), grads});
  c10::Dict<std::string, torch::Tensor> grads_res;
  grads_res.insert("fc.weight.grad", torch::ones({2}) + 1);
  const auto worst = worst_output(ref, tuple({torch::zeros({2}), grads_res}), c10::IValue());
  REQUIRE(worst);
  CHECK(worst->path == "output[1]['fc.weight.grad']");
  CHECK(worst->max_abs_error == 1.0);
}

TEST_CASE("worst_output: with same()'s options, a failing leaf outranks a passing one") {
  // Leaf 0: eager equals float64 exactly, the backend is 1e-6 off: an infinite RMSE ratio, but it
  // passes allclose. Leaf 1: 0.5 off, a finite ratio, fails.
  const auto g0 = torch::full({4}, 0.5, torch::kDouble);
  const auto g1 = torch::linspace(0, 1, 4, torch::kDouble);
  const auto ref = tuple({g0.to(torch::kFloat), (g1 + 1e-3).to(torch::kFloat)});
  const auto res = tuple({(g0 + 1e-6).to(torch::kFloat), (g1 + 0.5).to(torch::kFloat)});
  const auto fp64 = tuple({g0, g1});
  same_options options;
  options.tol = 1e-4;
  std::string why, where;
  REQUIRE_FALSE(same(ref, res, fp64, options, &why, &where));
  CHECK(where == "[1]");
  // Without a verdict per leaf, the ratio alone points at the passing leaf.
  CHECK(worst_output(ref, res, fp64)->path == "output[0]");
  const auto worst = worst_output(ref, res, fp64, &options);
  REQUIRE(worst);
  CHECK(worst->path == "output[1]");
  CHECK(worst->passed == false);
  CHECK(worst->max_abs_error == doctest::Approx(0.499).epsilon(1e-3));
}

TEST_CASE("worst_output: a leaf of several chunks gets the whole leaf's figures") {
  // The figures are summed and maxed over chunks of 2^20 elements; 2.5 chunks here, the largest
  // error in the last, partial one.
  torch::manual_seed(0);
  const int64_t n = (int64_t{5} << 20) / 2;
  const auto golden = torch::randn({n / 2, 2}, torch::kDouble);
  const auto ref = (golden + 1e-6 * torch::randn_like(golden)).to(torch::kFloat);
  auto res = (golden + 1e-4 * torch::randn_like(golden)).to(torch::kFloat);
  res.view(-1)[n - 3] += 0.25;
  const auto worst = worst_output(ref, res, golden);
  REQUIRE(worst);
  const auto x = ref.to(torch::kDouble), y = res.to(torch::kDouble);
  CHECK(worst->max_abs_error == (x - y).abs().max().item<double>());
  CHECK(worst->max_rel_error == ((x - y).abs() / x.abs()).max().item<double>());
  CHECK(worst->cosine_similarity ==
        doctest::Approx(torch::cosine_similarity(x.flatten(), y.flatten(), 0).item<double>())
            .epsilon(1e-12));
  REQUIRE(worst->ref_rmse_vs_fp64);
  CHECK(*worst->ref_rmse_vs_fp64 == doctest::Approx(rmse(golden, ref)).epsilon(1e-12));
  CHECK(*worst->res_rmse_vs_fp64 == doctest::Approx(rmse(golden, res)).epsilon(1e-12));
  // equal leaves: one RMSE for both sides, over the chunks too
  const auto equal = worst_output(ref, ref.clone(), golden);
  CHECK(*equal->ref_rmse_vs_fp64 == doctest::Approx(rmse(golden, ref)).epsilon(1e-12));
  // a NaN in a later chunk is the max, as torch's max() gives it
  auto with_nan = res.clone();
  with_nan.view(-1)[n - 1] = std::nan("");
  CHECK(std::isnan(worst_output(ref, with_nan, golden)->max_abs_error));
}

}  // namespace
}  // namespace benchmatrix
