// torch.testing.assert_close semantics for whole outputs (kernel_evals.md §1.6): every tensor leaf
// of `actual` must match `expected` in structure, shape and dtype, and elementwise
// |actual - expected| <= atol + rtol * |expected| (computed in float64 as torch promotes), with
// equal_nan=false (a NaN on either side fails; equal infinities pass). Default tolerances per dtype
// are torch.testing's; a given rtol or atol replaces only its own default. Integers and bool are
// compared exactly (rtol = atol = 0), as torch.testing's defaults for them are.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>

namespace benchmatrix {

/// torch.testing's default (rtol, atol): float32 1.3e-6/1e-5, float64 1e-7/1e-7, bfloat16
/// 1.6e-2/1e-5, float16 1e-3/1e-5 (complex as its real dtype), everything else 0/0.
[[nodiscard]] std::pair<double, double> default_close_tolerances(torch::ScalarType dtype);

struct close_tolerances {
  std::optional<double> rtol;  // nullopt: the dtype's default
  std::optional<double> atol;
  /// NaN at the same position on both sides matches (torch.testing's equal_nan=True; backend_bench's
  /// op tests, where NaN is part of an op's result). Off by default: a NaN fails.
  bool equal_nan = false;
};

struct close_result {
  bool passed = true;
  double max_abs_error = 0;  // max |actual - expected| over every compared element
  // max |actual - expected| / |expected| over every element: inf where expected is 0 and actual
  // is not, or where either is NaN (numerics/close_tolerances.hpp, relative_difference)
  double max_rel_error = 0;
  int tensors_compared = 0;
  std::string mismatch;      // the first failing leaf: its path, flat index and both values
};

/// Compares two outputs (tensors, or tuples/lists/dicts of them, other leaves by equality).
[[nodiscard]] close_result assert_close(const c10::IValue& actual, const c10::IValue& expected,
                                        const close_tolerances& tolerances);

}  // namespace benchmatrix
