// configs/torchbench.yaml skip rules and batch sizes, including PyTorch's nested lists.
#include "suites/suite_config.hpp"

#include <doctest/doctest.h>

using namespace benchmatrix;

namespace {
experiment_config experiment(const std::string& accelerator, const std::string& test,
                             nullable_string xla = std::nullopt,
                             nullable_string dynamo = std::nullopt) {
  experiment_config e;
  e.accelerator = accelerator;
  e.test = test;
  e.xla = std::move(xla);
  e.dynamo = std::move(dynamo);
  return e;
}
const char* yaml = R"(
skip:
  all: [a_model, [nested_1, [nested_2]]]
  device:
    cuda: [cpu_only]
  test:
    training: [eval_only]
  multiprocess: [ddp_model]
batch_size:
  training: {dlrm: 1024}
  inference: {dlrm: 2}
dont_change_batch_size: [fixed]
canary_models: [[detectron2_a, detectron2_b], tts_angular]
deny:
  slow_generate:
    - {test: eval, xla: PJRT, dynamo: None}
)";
}  // namespace

TEST_CASE("skip lists: all, device, test, multiprocess, nested lists, deny entries") {
  const auto c = suite_config::load_text(yaml, "torchbench.yaml");
  CHECK(c.skip_reason("a_model", experiment("cpu", "eval")) ==
        "model is in skip.all of torchbench.yaml");
  CHECK(c.skip_reason("nested_2", experiment("cpu", "eval")).has_value());
  CHECK(c.skip_reason("cpu_only", experiment("cuda", "eval")).has_value());
  CHECK_FALSE(c.skip_reason("cpu_only", experiment("cpu", "eval")).has_value());
  CHECK(c.skip_reason("eval_only", experiment("cpu", "train")) ==
        "model is in skip.test.training of torchbench.yaml");
  CHECK_FALSE(c.skip_reason("eval_only", experiment("cpu", "eval")).has_value());
  CHECK(c.skip_reason("ddp_model", experiment("cpu", "eval")).has_value());
  CHECK(c.skip_reason("slow_generate", experiment("cpu", "eval", "PJRT")).has_value());
  CHECK_FALSE(c.skip_reason("slow_generate", experiment("cpu", "eval", "PJRT", "openxla")).has_value());
  CHECK_FALSE(c.skip_reason("slow_generate", experiment("cpu", "train", "PJRT")).has_value());
}

TEST_CASE("batch sizes and dont_change_batch_size") {
  const auto c = suite_config::load_text(yaml, "torchbench.yaml");
  CHECK(c.batch_size("dlrm", "train") == 1024);
  CHECK(c.batch_size("dlrm", "eval") == 2);
  CHECK_FALSE(c.batch_size("llama", "eval").has_value());
  CHECK(c.dont_change_batch_size("fixed"));
}

TEST_CASE("model lists: nested lists flattened (PyTorch's YAML anchors), other models not listed") {
  const auto c = suite_config::load_text(yaml, "torchbench.yaml");
  CHECK(c.canary_models() == std::set<std::string>{"detectron2_a", "detectron2_b", "tts_angular"});
  CHECK_THROWS_WITH(suite_config::load_text("canary_models: {a: 1}\n", "t.yaml"),
                    doctest::Contains("t.yaml: canary_models: expected a list of model names"));
}

TEST_CASE("dtype.force_* lists: nested lists flattened, each list read into its own rule") {
  const auto c = suite_config::load_text(R"(
dtype:
  force_amp_for_fp16_bf16_models: [DALLE2_pytorch, [Super_SloMo, [tts_angular]]]
  force_fp16_for_bf16_models: [vision_maskrcnn]
)",
                                         "torchbench.yaml");
  CHECK(c.force_amp("DALLE2_pytorch"));
  CHECK(c.force_amp("Super_SloMo"));
  CHECK(c.force_amp("tts_angular"));
  CHECK_FALSE(c.force_amp("vision_maskrcnn"));
  CHECK(c.force_fp16("vision_maskrcnn"));
  CHECK_FALSE(c.force_fp16("tts_angular"));
  CHECK_FALSE(c.force_amp("resnet50"));
  CHECK_FALSE(c.force_fp16("resnet50"));

  // Absent or empty lists force nothing (configs/torchbench.yaml has both empty).
  const auto empty = suite_config::load_text("dtype:\n  force_amp_for_fp16_bf16_models: []\n",
                                             "torchbench.yaml");
  CHECK_FALSE(empty.force_amp("tts_angular"));
  CHECK_FALSE(empty.force_fp16("vision_maskrcnn"));
  CHECK_FALSE(suite_config::load_text("skip: {all: []}\n", "t.yaml").force_fp16("x"));
}

TEST_CASE("a malformed dtype list is an error naming the list") {
  CHECK_THROWS_WITH_AS(
      suite_config::load_text("dtype:\n  force_fp16_for_bf16_models: {a: 1}\n", "t.yaml"),
      doctest::Contains("t.yaml: dtype.force_fp16_for_bf16_models: expected a list of model names"),
      std::runtime_error);
  CHECK_THROWS_WITH_AS(
      suite_config::load_text("dtype:\n  force_amp_for_fp16_bf16_models: {a: 1}\n", "t.yaml"),
      doctest::Contains("t.yaml: dtype.force_amp_for_fp16_bf16_models: expected a list"),
      std::runtime_error);
  CHECK_THROWS_WITH_AS(suite_config::load_text("dtype: [a, b]\n", "t.yaml"),
                       doctest::Contains("t.yaml: dtype: expected a mapping"), std::runtime_error);
}

TEST_CASE("optimizer lists: SGD and none, nested lists flattened; a model in both is an error") {
  const auto config = suite_config::load_text(
      "optimizer:\n  sgd: [OPTForCausalLM, [XGLMForCausalLM]]\n  none: [MobileBertForMaskedLM]\n",
      "t.yaml");
  CHECK(config.trains_with_sgd("OPTForCausalLM"));
  CHECK(config.trains_with_sgd("XGLMForCausalLM"));
  CHECK_FALSE(config.trains_with_sgd("MobileBertForMaskedLM"));
  CHECK(config.skips_optimizer("MobileBertForMaskedLM"));
  CHECK_FALSE(config.skips_optimizer("OPTForCausalLM"));
  CHECK_FALSE(suite_config::load_text("skip: {all: []}\n", "t.yaml").trains_with_sgd("a"));
  CHECK_THROWS_WITH_AS(
      suite_config::load_text("optimizer:\n  sgd: [m]\n  none: [m]\n", "t.yaml"),
      doctest::Contains("t.yaml: optimizer: m is in both optimizer.sgd and optimizer.none"),
      std::runtime_error);
  CHECK_THROWS_WITH_AS(suite_config::load_text("optimizer:\n  sgd: {m: 1}\n", "t.yaml"),
                       doctest::Contains("t.yaml: optimizer.sgd: expected a list of model names"),
                       std::runtime_error);
}

TEST_CASE("malformed YAML is an error naming the file and the key") {
  CHECK_THROWS_WITH_AS(suite_config::load_text("batch_size:\n  training: {dlrm: many}\n", "t.yaml"),
                       doctest::Contains("t.yaml: batch_size.training.dlrm: expected a positive integer"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(suite_config::load_text("skip: [1, 2]\n", "t.yaml"),
                       doctest::Contains("t.yaml"), std::runtime_error);
  CHECK_THROWS_WITH_AS(suite_config::load_text("deny:\n  m:\n    - {colour: red}\n", "t.yaml"),
                       doctest::Contains("unknown experiment attribute 'colour'"),
                       std::runtime_error);
  CHECK_THROWS_AS(suite_config::load_text("skip: {all: [a\n", "t.yaml"), std::runtime_error);
}
