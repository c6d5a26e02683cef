#include "verifier/tolerance.hpp"

#include <algorithm>

namespace benchmatrix {
namespace {

constexpr double eval_floor = 1e-2;  // the XLA runner's eval tolerance

}  // namespace

tolerance_choice choose_tolerance(const tolerance_inputs& in, const suite_config* config) {
  const auto listed = [&](const char* list) {
    return config && config->in_tolerance_list(list, in.model);
  };
  tolerance_choice c;
  c.cosine = in.cosine_override || listed("cosine");
  if (in.tolerance_override) {
    c.tolerance = *in.tolerance_override;
    c.rule = "--verify-tolerance";
    return c;
  }
  const std::string precision = precision_plan_name(in.precision);
  if (in.precision.float16()) {
    if (listed("even_higher")) {
      c.tolerance = 8e-2;
      c.rule = precision + ", tolerance.even_higher: 8e-2";
    } else if (listed("higher_fp16")) {
      c.tolerance = 1e-2;
      c.rule = precision + ", tolerance.higher_fp16: 1e-2";
    } else {
      c.tolerance = 1e-3;
      c.rule = precision + ": 1e-3";
    }
  } else if (in.precision.bfloat16() && listed("higher_bf16")) {
    c.tolerance = 1e-2;
    c.rule = precision + ", tolerance.higher_bf16: 1e-2";
  } else if (in.training && in.cuda) {
    if (listed("even_higher")) {
      c.tolerance = 8e-2;
      c.rule = "train on CUDA, tolerance.even_higher: 8e-2";
    } else if (listed("higher")) {
      c.tolerance = 1e-3;
      c.rule = "train on CUDA, tolerance.higher: 1e-3";
    } else {
      c.tolerance = 1e-3;
      c.rule = "train on CUDA: 1e-3";
    }
  } else {
    c.tolerance = 1e-4;
    c.rule = precision + (in.training ? " train" : " eval") + ": 1e-4";
  }
  if (!in.training && c.tolerance < eval_floor) {
    c.rule += ", raised to eval's 1e-2";
    c.tolerance = eval_floor;
  }
  return c;
}

}  // namespace benchmatrix
