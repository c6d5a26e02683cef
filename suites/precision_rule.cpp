#include "suites/precision_rule.hpp"

namespace benchmatrix {

const char* cast_dtype_name(cast_dtype dtype) {
  switch (dtype) {
  case cast_dtype::float16: return "float16";
  case cast_dtype::bfloat16: return "bfloat16";
  case cast_dtype::float64: return "float64";
  }
  return "unknown";
}

const char* precision_plan_name(const precision_plan& plan) {
  if (plan.use_amp) return "float16 autocast";  // autocast's dtype is float16
  return plan.cast ? cast_dtype_name(*plan.cast) : "float32";
}

precision_plan choose_precision(const precision_request& request) {
  precision_plan plan;
  if (request.forced) {
    plan.cast = request.forced;  // autocast would leave float64 alone anyway; off says so
    return plan;
  }
  plan.use_amp = request.cuda && (request.training || request.force_amp);
  if (!request.training && !plan.use_amp)
    plan.cast = request.force_fp16 ? cast_dtype::float16 : cast_dtype::bfloat16;
  return plan;
}

}  // namespace benchmatrix
