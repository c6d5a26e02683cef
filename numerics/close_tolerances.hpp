// torch.testing.assert_close's default tolerances per dtype, in one place for every comparison
// that follows its semantics (numeric_check on exported arrays, the --metrics accuracy check).
#pragma once

#include <string_view>

namespace benchmatrix {

struct rtol_atol {
  double rtol = 0;
  double atol = 0;
};

/// By the dtype's name without "torch.": float32 {1.3e-6, 1e-5}, float64 {1e-7, 1e-7}, bfloat16
/// {1.6e-2, 1e-5}, float16 {1e-3, 1e-5} (complex64/128/32 as their parts); anything else (integers,
/// bool) {0, 0}: exact.
[[nodiscard]] rtol_atol default_rtol_atol(std::string_view dtype);

/// The relative difference of one element, as torch.testing.assert_close's message computes it
/// (torch/testing/_comparison.py, make_tensor_mismatch_msg: abs_diff / abs(expected)):
/// |actual - expected| / |expected|, so +inf where expected is 0 and actual is not; 0 where both
/// are equal (0 and 0, equal infinities). The "max rel error" of numeric_check and of --metrics
/// accuracy (verifier/assert_close.hpp) is its maximum over every element (torch's message takes
/// mismatching elements only; ours also reports passing tensors); an element that is NaN on one
/// side only counts as +inf in both max abs and max rel error, NaN on both sides as 0 where NaNs
/// are equal (numeric_check, equal_nan) and as +inf where they are not (--metrics accuracy).
[[nodiscard]] double relative_difference(double actual, double expected);

}  // namespace benchmatrix
