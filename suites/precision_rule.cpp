#include "suites/precision_rule.hpp"

#include "core/precision_axes.hpp"

#include <stdexcept>

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
  if (plan.use_amp)
    return plan.amp_dtype == cast_dtype::bfloat16 ? "bfloat16 autocast" : "float16 autocast";
  return plan.cast ? cast_dtype_name(*plan.cast) : "float32";
}

precision_plan choose_precision(const precision_request& request) {
  precision_plan plan;
  if (request.forced) {
    plan.cast = request.forced;  // autocast would leave float64 alone anyway; off says so
    return plan;
  }
  const std::string& requested = request.requested;
  if (requested != default_precision) {
    if (requested == "bfloat16") plan.cast = cast_dtype::bfloat16;
    else if (requested == "float16") plan.cast = cast_dtype::float16;
    else if (requested == "amp") plan.use_amp = true;
    else if (requested == "amp_bf16") {
      plan.use_amp = true;
      plan.amp_dtype = cast_dtype::bfloat16;
    } else if (requested != "float32") {
      throw std::invalid_argument("precision '" + requested + "': expected one of " +
                                  precision_name_list());
    }
    return plan;
  }
  plan.use_amp = request.cuda && (request.training || request.force_amp);
  if (!request.training && !plan.use_amp)
    plan.cast = request.force_fp16 ? cast_dtype::float16 : cast_dtype::bfloat16;
  return plan;
}

}  // namespace benchmatrix
