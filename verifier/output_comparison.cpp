#include "verifier/output_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace benchmatrix {
namespace {

/// A container's children with their path steps (same.hpp's index_path and key_path), as same()
/// names a failing leaf.
std::vector<std::pair<std::string, c10::IValue>> children(const c10::IValue& value) {
  std::vector<std::pair<std::string, c10::IValue>> out;
  if (value.isTuple() || value.isList()) {
    const auto elements =
        value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
    for (size_t i = 0; i < elements.size(); ++i)
      out.emplace_back(index_path(i), elements[i]);
  } else if (value.isGenericDict()) {
    for (const auto& entry : value.toGenericDict())
      out.emplace_back(key_path(entry.key().toStringRef()), entry.value());
  }
  return out;
}

c10::IValue child_named(const c10::IValue& value, const std::string& name) {
  for (auto& [n, v] : children(value))
    if (n == name) return v;
  return c10::IValue();
}

/// How bad a leaf is, for picking the worst: res/ref RMSE ratio with fp64, else max abs error.
double badness(const leaf_comparison& c) {
  if (c.res_rmse_vs_fp64 && c.ref_rmse_vs_fp64) {
    if (*c.ref_rmse_vs_fp64 > 0) return *c.res_rmse_vs_fp64 / *c.ref_rmse_vs_fp64;
    return *c.res_rmse_vs_fp64 > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return c.max_abs_error;
}

/// Elements per chunk of a leaf's figures: 1 Mi, 8 MiB per float64 temporary. The figures were
/// whole-leaf float64 expressions, about twenty temporaries the size of the leaf, each a fresh
/// mmap that the kernel zero-fills page by page (glibc maps every block above its mmap threshold,
/// at most 32 MiB, and unmaps it on free): a 160-million-element leaf took 17-18 s on the build
/// machine against 3.2-3.4 s in chunks (bench/verifier_compare.cpp; BENCHMARKS.md "Other
/// measurements"), and BlenderbotSmallForCausalLM's inductor verifier compared for
/// 81 s on an H200 x4 host (2026-11-28). Chunks this size come from the heap, reused.
constexpr int64_t figure_chunk = int64_t{1} << 20;

/// Calls visit(start, length) for the consecutive chunks of figure_chunk elements that cover n.
template <typename Visit>
void for_each_chunk(int64_t n, Visit&& visit) {
  for (int64_t start = 0; start < n; start += figure_chunk)
    visit(start, std::min(figure_chunk, n - start));
}

/// max that keeps a NaN, as torch's max() of a tensor holding one does.
double nan_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return std::max(a, b);
}

/// The figures of a leaf whose backend output differs from eager's, one chunk at a time:
/// max abs and max relative error, the cosine similarity of the flattened leaves (torch's
/// cosine_similarity: each norm clamped at eps 1e-12; equal leaves, NaNs in the same places and two
/// all-zero leaves included, score 1, as same()'s cosine mode passes them by its allclose early
/// exit: torch's cosine of two zero vectors is 0, which would read as "unrelated") and, with a
/// float64 golden leaf, both RMSEs against it (torch._dynamo.utils.rmse, sums over the chunks).
void differing_leaf_figures(const torch::Tensor& ref, const torch::Tensor& res,
                            const torch::Tensor& golden, leaf_comparison& c) {
  const auto x_all = ref.reshape(-1), y_all = res.reshape(-1);
  const auto g_all = golden.defined() ? golden.reshape(-1) : torch::Tensor();
  const int64_t n = x_all.numel();
  double dot = 0, x_norm2 = 0, y_norm2 = 0, ref_square_error = 0, res_square_error = 0;
  bool equal = true;
  for_each_chunk(n, [&](int64_t start, int64_t length) {
    const auto x = x_all.narrow(0, start, length).to(torch::kDouble);
    const auto y = y_all.narrow(0, start, length).to(torch::kDouble);
    const auto difference = (x - y).abs();
    c.max_abs_error = nan_max(c.max_abs_error, difference.max().item<double>());
    const auto nonzero = x != 0;
    if (nonzero.any().item<bool>())
      c.max_rel_error = nan_max(
          c.max_rel_error, (difference / x.abs()).masked_select(nonzero).max().item<double>());
    equal = equal && torch::allclose(x, y, /*rtol=*/0, /*atol=*/0, /*equal_nan=*/true);
    dot += torch::dot(x, y).item<double>();
    x_norm2 += torch::dot(x, x).item<double>();
    y_norm2 += torch::dot(y, y).item<double>();
    if (g_all.defined()) {
      const auto g = g_all.narrow(0, start, length).to(torch::kDouble);
      ref_square_error += torch::square(g - x).sum().item<double>();
      res_square_error += torch::square(g - y).sum().item<double>();
    }
  });
  constexpr double eps = 1e-12;
  c.cosine_similarity =
      n == 0 || equal
          ? 1.0
          : dot / (std::max(std::sqrt(x_norm2), eps) * std::max(std::sqrt(y_norm2), eps));
  if (g_all.defined()) {
    c.ref_rmse_vs_fp64 = std::sqrt(ref_square_error / static_cast<double>(n));
    c.res_rmse_vs_fp64 = std::sqrt(res_square_error / static_cast<double>(n));
  }
}

/// rmse(golden, leaf), one chunk at a time (differing_leaf_figures says why).
double chunked_rmse(const torch::Tensor& golden, const torch::Tensor& leaf) {
  const auto g_all = golden.reshape(-1), x_all = leaf.reshape(-1);
  const int64_t n = x_all.numel();
  double square_error = 0;
  for_each_chunk(n, [&](int64_t start, int64_t length) {
    square_error += torch::square(g_all.narrow(0, start, length).to(torch::kDouble) -
                                  x_all.narrow(0, start, length).to(torch::kDouble))
                        .sum()
                        .item<double>();
  });
  return std::sqrt(square_error / static_cast<double>(n));
}

/// same() on one leaf; a raise counts as a failure (as PyTorch's check_accuracy counts it).
bool leaf_passes(const c10::IValue& a, const c10::IValue& b, const c10::IValue& golden,
                 const same_options& options) {
  try {
    return same(a, b, golden, options);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::optional<leaf_comparison> worst_output(const c10::IValue& ref, const c10::IValue& res,
                                            const c10::IValue& fp64, const same_options* options) {
  std::optional<leaf_comparison> worst;
  const auto outranks = [](const leaf_comparison& c, const leaf_comparison& current) {
    const bool failing = c.passed == false, current_failing = current.passed == false;
    if (failing != current_failing) return failing;
    return badness(c) > badness(current);
  };
  std::function<void(const std::string&, const c10::IValue&, const c10::IValue&,
                     const c10::IValue&)>
      walk = [&](const std::string& path, const c10::IValue& a, const c10::IValue& b,
                 const c10::IValue& golden) {
        if (a.isTensor()) {
          if (!b.isTensor()) return;
          const torch::Tensor& ref_leaf = a.toTensor();
          const torch::Tensor& res_leaf = b.toTensor();
          if (!ref_leaf.is_floating_point() || ref_leaf.sizes() != res_leaf.sizes()) return;
          leaf_comparison c;
          c.path = path;
          const torch::Tensor golden_leaf =
              golden.isTensor() && golden.toTensor().sizes() == ref_leaf.sizes()
                  ? golden.toTensor()
                  : torch::Tensor();
          if (ref_leaf.scalar_type() == res_leaf.scalar_type() && torch::equal(ref_leaf, res_leaf)) {
            // Equal (every leaf of an eager experiment): no error, cosine 1, one RMSE for both
            // sides: a few passes over the leaf instead of twenty, on the outputs where this is the
            // verifier's main CPU cost (a train step's logits, parameters and gradients: 470
            // million elements for BertForMaskedLM; bench/verifier_compare.cpp)
            if (golden_leaf.defined()) {
              c.ref_rmse_vs_fp64 = chunked_rmse(golden_leaf, ref_leaf);
              c.res_rmse_vs_fp64 = c.ref_rmse_vs_fp64;
            }
          } else {
            differing_leaf_figures(ref_leaf, res_leaf, golden_leaf, c);
          }
          // same()'s own verdict (it takes the same early exit for equal leaves)
          if (options) c.passed = leaf_passes(a, b, golden, *options);
          if (!worst || outranks(c, *worst)) worst = c;
          return;
        }
        for (const auto& [name, child] : children(a))
          walk(path + name, child, child_named(b, name), child_named(golden, name));
      };
  walk("output", ref, res, fp64);
  return worst;
}

}  // namespace benchmatrix
