#include "numerics/close_tolerances.hpp"

#include <cmath>

namespace benchmatrix {

rtol_atol default_rtol_atol(std::string_view dtype) {
  if (dtype == "float32" || dtype == "complex64") return {1.3e-6, 1e-5};
  if (dtype == "float64" || dtype == "complex128") return {1e-7, 1e-7};
  if (dtype == "bfloat16") return {1.6e-2, 1e-5};
  if (dtype == "float16" || dtype == "complex32") return {1e-3, 1e-5};
  return {0, 0};
}

double relative_difference(double actual, double expected) {
  if (actual == expected) return 0;
  return std::abs(actual - expected) / std::abs(expected);  // x / 0 = inf for x != 0
}

}  // namespace benchmatrix
