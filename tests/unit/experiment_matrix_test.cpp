// Matrix expansion: the counts of shared/reference/xla_runner.md §2.2, order and JSON key order.
#include "backends/availability.hpp"
#include "core/experiment_config.hpp"
#include "runner/experiment_matrix.hpp"
#include "runner/model_selection.hpp"
#include "runner/runner_cli.hpp"

#include <doctest/doctest.h>

using namespace benchmatrix;

namespace {
std::vector<experiment_config> expand(std::vector<std::string> args) {
  args.insert(args.begin(), "--suite-name=dummy");
  return expand_experiment_matrix(parse_runner_options(args, {"dummy"}, "/nonexistent"));
}
}  // namespace

TEST_CASE("config counts of the original's tests") {
  CHECK(expand({"--dynamo", "openxla", "--dynamo", "inductor", "--xla", "PJRT", "--xla", "None",
                "--test", "eval", "--test", "train", "--accelerator", "cpu"})
            .size() == 4);
  CHECK(expand({"--dynamo", "openxla", "--dynamo", "inductor", "--xla", "PJRT", "--xla", "None",
                "--test", "eval", "--test", "train", "--accelerator", "cuda"})
            .size() == 4);
  CHECK(expand({"--dynamo", "inductor", "--xla", "PJRT", "--xla", "None", "--test", "eval",
                "--test", "train", "--accelerator", "cuda"})
            .size() == 2);
  const auto eight = expand({"--accelerator", "cuda", "--xla", "PJRT", "--xla", "None"});
  CHECK(eight.size() == 8);
  for (const auto& c : eight) {
    if (c.xla) CHECK((!c.dynamo || c.dynamo == "openxla"));
    else CHECK((!c.dynamo || c.dynamo == "inductor"));
  }
  CHECK(expand({"--dynamo", "openxla", "--xla", "PJRT", "--test", "eval", "--test", "train",
                "--accelerator", "cuda", "--keep-model-data-on-cuda"})
            .size() == 2);
}

TEST_CASE("torchscript and cudagraphs never combine with XLA; cudagraphs needs CUDA") {
  const auto configs = expand({"--accelerator=cpu", "--accelerator=cuda", "--xla=None", "--xla=PJRT",
                               "--dynamo=torchscript", "--dynamo=cudagraphs", "--test=eval"});
  REQUIRE(configs.size() == 4);  // xla=None only, on both accelerators
  for (const auto& c : configs) {
    CHECK_FALSE(c.xla.has_value());
    const auto reason = benchmatrix::unavailable_reason(c);
    if (c.dynamo == "cudagraphs" && c.accelerator == "cpu") {
      REQUIRE(reason.has_value());
      CHECK(reason->find("dynamo=cudagraphs needs accelerator=cuda") != std::string::npos);
    } else if (c.accelerator == "cpu") {
      CHECK_FALSE(reason.has_value());  // torchscript runs on the CPU
    }
  }
  CHECK(benchmatrix::unavailable_reason(expand({"--accelerator=cpu", "--xla=None",
                                                "--dynamo=inductor", "--test=eval"})[0]) ==
        std::nullopt);
}

TEST_CASE("deterministic CLI order, duplicates dropped, last axis fastest") {
  const auto configs = expand({"--accelerator=cpu", "--test=train", "--test=eval", "--test=train",
                               "--xla=None", "--dynamo=None", "--dynamo=inductor"});
  REQUIRE(configs.size() == 4);
  CHECK(configs[0].test == "train");
  CHECK_FALSE(configs[0].dynamo.has_value());
  CHECK(configs[1].test == "eval");
  CHECK(configs[2].dynamo == "inductor");
  CHECK(configs[2].test == "train");
}

TEST_CASE("experiment config JSON has the original's key order and formatting") {
  const auto c = expand({"--accelerator=cuda", "--xla=PJRT", "--dynamo=openxla", "--test=eval"});
  REQUIRE(c.size() == 1);
  CHECK(c[0].to_config_json() ==
        R"({"accelerator": "cuda", "xla": "PJRT", "xla_flags": null, "dynamo": "openxla", )"
        R"("torch_xla2": null, "test": "eval", "keep_model_data_on_cuda": false, )"
        R"("enable_functionalization": false})");
  const auto back = experiment_config::from_config_json(
      R"({"accelerator": "CPU", "xla": null, "xla_flags": null, "dynamo": null, "torch_xla2": null, "test": "train", "enable_functionalization": false})");
  CHECK(back.accelerator == "cpu");  // the original lower-cases it
  CHECK(back.test == "train");
  CHECK_THROWS_WITH_AS(experiment_config::from_config_json(R"({"accelerator": "cpu"})"),
                       doctest::Contains("missing key 'xla'"), std::runtime_error);
}

TEST_CASE("model selection: partition first, then case-insensitive filters") {
  const std::vector<std::string> models = {"BERT_pytorch", "alexnet", "dlrm", "llama", "resnet18",
                                           "resnet50"};
  auto options = [](std::vector<std::string> args) {
    args.insert(args.begin(), "--suite-name=torchbench");
    return parse_runner_options(args, {"torchbench"}, "/nonexistent");
  };
  CHECK(select_models(models, options({"-k", "RESNET"})) ==
        std::vector<std::string>{"resnet18", "resnet50"});
  CHECK(select_models(models, options({"-k", "resnet", "-x", "50$"})) ==
        std::vector<std::string>{"resnet18"});
  CHECK(select_models(models, options({"--total-partitions=4", "--partition-id=0"})) ==
        std::vector<std::string>{"BERT_pytorch"});
  CHECK(select_models(models, options({"--total-partitions=4", "--partition-id=3"})) ==
        std::vector<std::string>{"llama", "resnet18", "resnet50"});
  CHECK(select_models(models, options({"--filter-by-tier=1"})) ==
        std::vector<std::string>{"BERT_pytorch", "dlrm"});
  CHECK_THROWS_WITH_AS((void)select_models(models, options({"-k", "nomodel"})),
                       doctest::Contains("no model of suite 'torchbench' matches -k nomodel"),
                       usage_error);
  CHECK_THROWS_WITH_AS((void)select_models(models, options({"-k", "("})),
                       doctest::Contains("invalid regular expression"), usage_error);
}
