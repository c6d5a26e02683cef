// The precision decision of a model's setup (suites/precision_rule.hpp, xla_runner.md §7.3): every
// branch, CUDA ones included, without LibTorch or a GPU.
#include "suites/precision_rule.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <stdexcept>
#include <string>

using namespace benchmatrix;

namespace {
precision_plan plan_for(bool training, bool cuda, bool force_amp = false, bool force_fp16 = false,
                        std::optional<cast_dtype> forced = std::nullopt) {
  precision_request request;
  request.training = training;
  request.cuda = cuda;
  request.force_amp = force_amp;
  request.force_fp16 = force_fp16;
  request.forced = forced;
  return choose_precision(request);
}
const precision_plan float32{false, std::nullopt};
const precision_plan amp{true, std::nullopt};
const precision_plan bfloat16{false, cast_dtype::bfloat16};
const precision_plan float16{false, cast_dtype::float16};
const precision_plan float64{false, cast_dtype::float64};
}  // namespace

TEST_CASE("inference casts to bfloat16 where no AMP applies, on the CPU and on CUDA") {
  CHECK(plan_for(/*training=*/false, /*cuda=*/false) == bfloat16);
  CHECK(plan_for(/*training=*/false, /*cuda=*/true) == bfloat16);
}

TEST_CASE("training keeps float32: AMP on CUDA, plain float32 on the CPU") {
  CHECK(plan_for(/*training=*/true, /*cuda=*/true) == amp);
  CHECK(plan_for(/*training=*/true, /*cuda=*/false) == float32);
}

TEST_CASE("force_fp16 models run inference in float16, training as any model") {
  CHECK(plan_for(false, /*cuda=*/false, false, /*force_fp16=*/true) == float16);
  CHECK(plan_for(false, /*cuda=*/true, false, /*force_fp16=*/true) == float16);
  CHECK(plan_for(/*training=*/true, true, false, /*force_fp16=*/true) == amp);
  CHECK(plan_for(/*training=*/true, false, false, /*force_fp16=*/true) == float32);
}

TEST_CASE("force_amp models run inference under AMP on CUDA; the CPU never autocasts") {
  CHECK(plan_for(false, /*cuda=*/true, /*force_amp=*/true) == amp);
  CHECK(plan_for(false, /*cuda=*/false, /*force_amp=*/true) == bfloat16);
  // AMP wins over force_fp16 on CUDA: the model stays float32 under autocast.
  CHECK(plan_for(false, /*cuda=*/true, /*force_amp=*/true, /*force_fp16=*/true) == amp);
  CHECK(plan_for(false, /*cuda=*/false, /*force_amp=*/true, /*force_fp16=*/true) == float16);
}

TEST_CASE("a forced dtype (the verifier's float64 run) overrides every rule and turns AMP off") {
  for (const bool training : {false, true})
    for (const bool cuda : {false, true})
      for (const bool force_amp : {false, true})
        for (const bool force_fp16 : {false, true}) {
          INFO("training=" << training << " cuda=" << cuda << " force_amp=" << force_amp
                           << " force_fp16=" << force_fp16);
          CHECK(plan_for(training, cuda, force_amp, force_fp16, cast_dtype::float64) == float64);
        }
}

TEST_CASE("cast dtype names") {
  CHECK(std::string(cast_dtype_name(cast_dtype::float16)) == "float16");
  CHECK(std::string(cast_dtype_name(cast_dtype::bfloat16)) == "bfloat16");
  CHECK(std::string(cast_dtype_name(cast_dtype::float64)) == "float64");
}

TEST_CASE("a requested precision replaces the rules, on the CPU as on CUDA, eval and train") {
  precision_plan amp_bf16{true, std::nullopt, cast_dtype::bfloat16};
  for (const bool training : {false, true})
    for (const bool cuda : {false, true})
      for (const bool force_amp : {false, true}) {
        INFO("training=" << training << " cuda=" << cuda << " force_amp=" << force_amp);
        precision_request request;
        request.training = training;
        request.cuda = cuda;
        request.force_amp = force_amp;
        request.force_fp16 = true;
        request.requested = "float32";
        CHECK(choose_precision(request) == float32);
        request.requested = "bfloat16";
        CHECK(choose_precision(request) == bfloat16);
        request.requested = "float16";
        CHECK(choose_precision(request) == float16);
        request.requested = "amp";
        CHECK(choose_precision(request) == amp);
        request.requested = "amp_bf16";
        CHECK(choose_precision(request) == amp_bf16);
        request.forced = cast_dtype::float64;  // the verifier's golden run still wins
        CHECK(choose_precision(request) == float64);
      }
  CHECK(std::string(precision_plan_name(amp_bf16)) == "bfloat16 autocast");
  CHECK(std::string(precision_plan_name(amp)) == "float16 autocast");
  // PyTorch's harness gives --amp the float16 tolerances whatever its --amp-dtype
  CHECK(amp_bf16.float16());
  CHECK_FALSE(amp_bf16.bfloat16());
  precision_request unknown;
  unknown.requested = "fp8";
  CHECK_THROWS_AS((void)choose_precision(unknown), std::invalid_argument);
}
