// The verifier's tolerance rule (verifier/tolerance.hpp) against the lists of a suite YAML.
#include <doctest/doctest.h>

#include "verifier/tolerance.hpp"

namespace benchmatrix {
namespace {

const suite_config& yaml() {
  static const suite_config config = suite_config::load_text(R"(
tolerance:
  higher: [h]
  even_higher: [eh]
  higher_fp16: [h16]
  higher_bf16: [hb16]
  cosine: [cos]
)",
                                                              "tolerance_test.yaml");
  return config;
}

// The precision decisions of suites/precision_rule.hpp the rule distinguishes.
const precision_plan float32{};
const precision_plan bfloat16{false, cast_dtype::bfloat16};
const precision_plan float16{false, cast_dtype::float16};
const precision_plan float16_amp{true, std::nullopt};

tolerance_choice choose(const std::string& model, bool training, bool cuda, const precision_plan& p,
                        const suite_config* config = &yaml()) {
  tolerance_inputs in;
  in.model = model;
  in.training = training;
  in.cuda = cuda;
  in.precision = p;
  return choose_tolerance(in, config);
}

TEST_CASE("tolerance: the XLA runner's defaults for the precisions this runner uses") {
  CHECK(choose("m", false, false, bfloat16).tolerance == 1e-2);  // eval: bfloat16 inference
  CHECK(choose("m", false, true, bfloat16).tolerance == 1e-2);
  CHECK(choose("m", true, false, float32).tolerance == 1e-4);    // CPU training
  CHECK(choose("m", true, true, float16_amp).tolerance == 1e-3);  // CUDA training (AMP)
  CHECK(choose("m", true, true, float16_amp, nullptr).tolerance == 1e-3);
  CHECK_FALSE(choose("m", true, true, float16_amp).cosine);
}

TEST_CASE("tolerance: float16 follows PyTorch's --float16/--amp rule") {
  CHECK(choose("eh", true, true, float16_amp).tolerance == 8e-2);
  CHECK(choose("h16", true, true, float16_amp).tolerance == 1e-2);
  CHECK(choose("h", true, true, float16_amp).tolerance == 1e-3);
  // eval in float16 (force_fp16 models): even_higher applies, otherwise eval's 1e-2
  CHECK(choose("eh", false, false, float16).tolerance == 8e-2);
  CHECK(choose("m", false, false, float16).tolerance == 1e-2);
  CHECK(choose("m", false, false, float16).rule == "float16: 1e-3, raised to eval's 1e-2");
}

TEST_CASE("tolerance: bfloat16 and float32 lists") {
  CHECK(choose("hb16", false, false, bfloat16).tolerance == 1e-2);
  CHECK(choose("hb16", false, false, bfloat16).rule == "bfloat16, tolerance.higher_bf16: 1e-2");
  // even_higher and higher act in CUDA training only (PyTorch's and the XLA runner's rule)
  CHECK(choose("eh", true, true, float32).tolerance == 8e-2);
  CHECK(choose("h", true, true, float32).tolerance == 1e-3);
  CHECK(choose("h", true, true, float32).rule == "train on CUDA, tolerance.higher: 1e-3");
  CHECK(choose("eh", true, false, float32).tolerance == 1e-4);
  CHECK(choose("eh", false, false, bfloat16).tolerance == 1e-2);
}

TEST_CASE("tolerance: cosine from the list or the flag; --verify-tolerance wins") {
  CHECK(choose("cos", false, false, bfloat16).cosine);
  CHECK(choose("cos", true, false, float32).cosine);
  tolerance_inputs in;
  in.model = "eh";
  in.training = true;
  in.cuda = true;
  in.precision = float16_amp;
  in.tolerance_override = 0.5;
  in.cosine_override = true;
  const auto c = choose_tolerance(in, &yaml());
  CHECK(c.tolerance == 0.5);
  CHECK(c.rule == "--verify-tolerance");
  CHECK(c.cosine);
}

}  // namespace
}  // namespace benchmatrix
