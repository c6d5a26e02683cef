// Per-output figures that explain a verification verdict without a rerun: for every floating
// tensor leaf of the outputs (every element of a multi-output model; for train the loss, each
// gradient and each updated parameter), the max abs and max relative error against eager, both
// sides' RMSE against the float64 golden run, the cosine similarity, and same()'s verdict on that
// leaf alone.
#pragma once

#include "verifier/same.hpp"

#include <torch/torch.h>

#include <optional>
#include <string>

namespace benchmatrix {

struct leaf_comparison {
  std::string path;                         // Python indexing from "output": "output[1]",
                                            // "output[2]['fc.weight.grad']"
  double max_abs_error = 0;                 // max |eager - backend|
  double max_rel_error = 0;                 // max |eager - backend| / |eager| over the elements
                                            // where eager is non-zero (none: 0)
  std::optional<double> ref_rmse_vs_fp64;   // eager's RMSE against float64 (no fp64 run: none)
  std::optional<double> res_rmse_vs_fp64;   // the backend's
  double cosine_similarity = 1;             // of eager and backend, flattened, in float64; 1 when
                                            // they are equal (two all-zero leaves included)
  std::optional<bool> passed;               // same() on this leaf alone (no options: not judged)
};

/// The leaf whose backend output is furthest from the golden run relative to eager's own error
/// (res RMSE / ref RMSE; without a float64 run, the largest max abs error); nullopt when no
/// floating tensor leaf has matching shapes. `fp64` may be None. With `options`, every leaf is
/// also judged by same() with them, and when any leaf fails, the worst is picked among the
/// failing leaves only (a leaf that passed allclose never outranks the one that failed).
[[nodiscard]] std::optional<leaf_comparison> worst_output(const c10::IValue& ref,
                                                          const c10::IValue& res,
                                                          const c10::IValue& fp64,
                                                          const same_options* options = nullptr);

}  // namespace benchmatrix
