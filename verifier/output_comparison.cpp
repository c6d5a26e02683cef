#include "verifier/output_comparison.hpp"

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

/// Cosine similarity of two same-shaped float64 tensors, flattened. Equal tensors (NaNs in the
/// same places, two all-zero tensors) score 1, as same()'s cosine mode passes them by its allclose
/// early exit: torch's cosine_similarity of two zero vectors is 0, which would read as "unrelated".
double cosine_of(const torch::Tensor& x, const torch::Tensor& y) {
  if (x.numel() == 0 || torch::allclose(x, y, /*rtol=*/0, /*atol=*/0, /*equal_nan=*/true))
    return 1.0;
  return torch::cosine_similarity(x.flatten(), y.flatten(), /*dim=*/0, /*eps=*/1e-12)
      .item<double>();
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
              c.ref_rmse_vs_fp64 = rmse(golden_leaf.to(torch::kDouble), ref_leaf);
              c.res_rmse_vs_fp64 = c.ref_rmse_vs_fp64;
            }
          } else {
            const auto x = ref_leaf.to(torch::kDouble);
            const auto y = res_leaf.to(torch::kDouble);
            const auto difference = (x - y).abs();
            c.max_abs_error = x.numel() ? difference.max().item<double>() : 0.0;
            const auto nonzero = x != 0;
            if (nonzero.any().item<bool>())
              c.max_rel_error = (difference / x.abs()).masked_select(nonzero).max().item<double>();
            c.cosine_similarity = cosine_of(x, y);
            if (golden_leaf.defined()) {
              const auto g = golden_leaf.to(torch::kDouble);
              c.ref_rmse_vs_fp64 = rmse(g, x);
              c.res_rmse_vs_fp64 = rmse(g, y);
            }
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
