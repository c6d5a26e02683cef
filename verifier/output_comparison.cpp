#include "verifier/output_comparison.hpp"

#include "verifier/same.hpp"

#include <functional>
#include <limits>

namespace benchmatrix {
namespace {

std::vector<std::pair<std::string, c10::IValue>> children(const c10::IValue& value) {
  std::vector<std::pair<std::string, c10::IValue>> out;
  if (value.isTuple() || value.isList()) {
    const auto elements =
        value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
    for (size_t i = 0; i < elements.size(); ++i)
      out.emplace_back("[" + std::to_string(i) + "]", elements[i]);
  } else if (value.isGenericDict()) {
    for (const auto& entry : value.toGenericDict())
      out.emplace_back("." + entry.key().toStringRef(), entry.value());
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

}  // namespace

std::optional<leaf_comparison> worst_output(const c10::IValue& ref, const c10::IValue& res,
                                            const c10::IValue& fp64) {
  std::optional<leaf_comparison> worst;
  std::function<void(const std::string&, const c10::IValue&, const c10::IValue&,
                     const c10::IValue&)>
      walk = [&](const std::string& path, const c10::IValue& a, const c10::IValue& b,
                 const c10::IValue& golden) {
        if (a.isTensor()) {
          if (!b.isTensor()) return;
          const auto x = a.toTensor().to(torch::kDouble);
          const auto y = b.toTensor().to(torch::kDouble);
          if (!a.toTensor().is_floating_point() || x.sizes() != y.sizes()) return;
          leaf_comparison c;
          c.path = path;
          c.max_abs_error = x.numel() ? (x - y).abs().max().item<double>() : 0.0;
          c.cosine_similarity =
              x.numel() ? torch::cosine_similarity(x.flatten(), y.flatten(), 0, 1e-12).item<double>()
                        : 1.0;
          if (golden.isTensor() && golden.toTensor().sizes() == x.sizes()) {
            const auto g = golden.toTensor().to(torch::kDouble);
            c.ref_rmse_vs_fp64 = rmse(g, x);
            c.res_rmse_vs_fp64 = rmse(g, y);
          }
          if (!worst || badness(c) > badness(*worst)) worst = c;
          return;
        }
        for (const auto& [name, child] : children(a))
          walk(path + name, child, child_named(b, name), child_named(golden, name));
      };
  walk("output", ref, res, fp64);
  return worst;
}

}  // namespace benchmatrix
