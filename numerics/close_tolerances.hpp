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

}  // namespace benchmatrix
