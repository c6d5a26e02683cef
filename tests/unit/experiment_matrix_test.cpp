// Matrix expansion: the counts of shared/reference/xla_runner.md §2.2, order and JSON key order.
#include "backends/availability.hpp"
#include "core/experiment_config.hpp"
#include "runner/experiment_matrix.hpp"
#include "runner/model_selection.hpp"
#include "runner/runner_cli.hpp"
#include "runner/sweep_plan.hpp"

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
  const std::vector<suite_models> suites = {
      {"torchbench", {"BERT_pytorch", "alexnet", "dlrm", "llama", "resnet18", "resnet50"}}};
  auto options = [](std::vector<std::string> args) {
    args.insert(args.begin(), "--suite-name=torchbench");
    return parse_runner_options(args, {"torchbench"}, "/nonexistent");
  };
  auto names = [&](const std::vector<std::string>& args) {
    std::vector<std::string> out;
    for (const auto& m : select_models(suites, options(args))) {
      CHECK(m.suite == "torchbench");
      out.push_back(m.model);
    }
    return out;
  };
  CHECK(names({"-k", "RESNET"}) == std::vector<std::string>{"resnet18", "resnet50"});
  CHECK(names({"-k", "resnet", "-x", "50$"}) == std::vector<std::string>{"resnet18"});
  CHECK(names({"--total-partitions=4", "--partition-id=0"}) ==
        std::vector<std::string>{"BERT_pytorch"});
  CHECK(names({"--total-partitions=4", "--partition-id=3"}) ==
        std::vector<std::string>{"llama", "resnet18", "resnet50"});
  CHECK(names({"--filter-by-tier=1"}) == std::vector<std::string>{"BERT_pytorch", "dlrm"});
  CHECK_THROWS_WITH_AS((void)select_models(suites, options({"-k", "nomodel"})),
                       doctest::Contains("no model of suite 'torchbench' matches -k nomodel"),
                       usage_error);
  CHECK_THROWS_WITH_AS((void)select_models(suites, options({"-k", "("})),
                       doctest::Contains("invalid regular expression"), usage_error);
}

TEST_CASE("model selection over several suites: one list in --suite-name's order") {
  const std::vector<std::string> known = {"dummy", "timm_models", "torchbench"};
  const std::vector<suite_models> suites = {{"torchbench", {"alexnet", "resnet50"}},
                                            {"dummy", {"dummy"}},
                                            {"timm_models", {"mobilenetv2_100", "resnet50"}}};
  auto select = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "--suite-name=torchbench,dummy,timm_models");
    return select_models(suites, parse_runner_options(args, known, "/nonexistent"));
  };
  // Filters apply to every suite; the dummy suite's model is never filtered, as alone.
  CHECK(select({"-k", "resnet"}) ==
        std::vector<selected_model>{{"torchbench", "resnet50"}, {"dummy", "dummy"},
                                    {"timm_models", "resnet50"}});
  CHECK(select({"-x", "resnet|alex"}) ==
        std::vector<selected_model>{{"dummy", "dummy"}, {"timm_models", "mobilenetv2_100"}});
  // Partitions split the suites' models as one list (dummy's aside).
  CHECK(select({"--total-partitions=2", "--partition-id=0"}) ==
        std::vector<selected_model>{{"torchbench", "alexnet"}, {"torchbench", "resnet50"},
                                    {"dummy", "dummy"}});
  CHECK(select({"--total-partitions=2", "--partition-id=1"}) ==
        std::vector<selected_model>{{"dummy", "dummy"}, {"timm_models", "mobilenetv2_100"},
                                    {"timm_models", "resnet50"}});
  // A --slurm sweep plans all partitions at once: dummy's model goes into the last one only.
  auto slurm = parse_runner_options({"--suite-name=torchbench,dummy,timm_models"}, known,
                                    "/nonexistent");
  slurm.slurm = true;
  slurm.total_partitions = 2;
  CHECK(select_models(suites, slurm) ==
        std::vector<selected_model>{{"torchbench", "alexnet"}, {"torchbench", "resnet50"}});
  slurm.partition_id = 1;
  CHECK(select_models(suites, slurm) ==
        std::vector<selected_model>{{"dummy", "dummy"}, {"timm_models", "mobilenetv2_100"},
                                    {"timm_models", "resnet50"}});
  const std::vector<suite_models> without_dummy = {suites[0], suites[2]};
  CHECK_THROWS_WITH_AS(
      (void)select_models(without_dummy,
                          parse_runner_options({"--suite-name=torchbench,timm_models", "-k", "vit"},
                                               known, "/nonexistent")),
      doctest::Contains("no model of suites 'torchbench', 'timm_models' matches -k vit -x ^$ in "
                        "partition 0/1 (models: torchbench: alexnet, resnet50; timm_models: "
                        "mobilenetv2_100, resnet50)"),
      usage_error);
}

TEST_CASE("several suites: records, the child's --model-config and file names keep them apart") {
  const std::vector<std::string> known = {"dummy", "timm_models", "torchbench"};
  const auto two = parse_runner_options({"--suite-name=torchbench,timm_models", "--test=eval",
                                         "--accelerator=cpu", "--xla=None", "--dynamo=None"},
                                        known, "/nonexistent");
  const std::vector<selected_model> models = {{"torchbench", "resnet50"},
                                              {"timm_models", "resnet50"}};
  const auto configs = plan_configs(models, two);
  REQUIRE(configs.size() == 2);
  CHECK(configs[1].suite == "timm_models");
  CHECK(configs[1].model_json == R"({"suite_name": "timm_models", "model_name": "resnet50"})");
  CHECK(configs[1].model_label(two) == "timm_models/resnet50");
  CHECK(planned_identity(configs[1], two, "cpu").suite_name == "timm_models");
  CHECK(placement_free_key(configs[0], two) != placement_free_key(configs[1], two));
  // One suite: the original's --model-config and names, whatever the suite.
  const auto one = parse_runner_options({"--suite-name=timm_models", "--test=eval",
                                         "--accelerator=cpu", "--xla=None", "--dynamo=None"},
                                        known, "/nonexistent");
  const auto single = plan_configs({models[1]}, one);
  CHECK(single.front().model_json == R"({"model_name": "resnet50"})");
  CHECK(single.front().model_label(one) == "resnet50");

  check_model_files_apart(models, two);  // records only: nothing to overwrite
  auto saving = two;
  saving.save_output = true;
  CHECK_THROWS_WITH_AS(check_model_files_apart(models, saving),
                       doctest::Contains("model 'resnet50' is in suites torchbench and "
                                         "timm_models, and --save-output writes files named by "
                                         "model"),
                       usage_error);
  check_model_files_apart({models[0], {"timm_models", "mobilenetv2_100"}}, saving);
}

TEST_CASE("--precision is an axis of every config; --inductor-mode of inductor configs only") {
  const auto configs = expand({"--accelerator", "cpu", "--xla", "None", "--dynamo", "None",
                               "--dynamo", "inductor", "--test", "eval", "--precision", "float32",
                               "--precision", "amp_bf16", "--inductor-mode", "default",
                               "--inductor-mode", "max-autotune"});
  // eager: 2 precisions; inductor: 2 precisions x 2 modes
  REQUIRE(configs.size() == 6);
  CHECK(configs[0].precision == "float32");
  CHECK(configs[0].inductor_mode == "default");
  CHECK(configs[1].precision == "amp_bf16");
  CHECK(configs[2].dynamo == "inductor");
  CHECK(configs[2].precision == "float32");
  CHECK(configs[2].inductor_mode == "default");
  CHECK(configs[3].inductor_mode == "max-autotune");
  CHECK(configs[5].precision == "amp_bf16");
  CHECK(configs[5].inductor_mode == "max-autotune");
  // the config JSON the child reads carries them; a default config's JSON is the original's
  CHECK(configs[5].to_config_json().find(R"("precision": "amp_bf16", "inductor_mode": "max-autotune")") !=
        std::string::npos);
  const auto round_trip = experiment_config::from_config_json(configs[5].to_config_json());
  CHECK(round_trip.precision == "amp_bf16");
  CHECK(round_trip.inductor_mode == "max-autotune");
  const auto plain = expand({"--accelerator", "cpu", "--xla", "None", "--dynamo", "None",
                             "--test", "eval"});
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].precision == "auto");
  CHECK(plain[0].to_config_json().find("precision") == std::string::npos);
  CHECK(plain[0].describe() == "accelerator=cpu xla=None dynamo=None test=eval");
  CHECK(configs[5].describe() ==
        "accelerator=cpu xla=None dynamo=inductor test=eval precision=amp_bf16 "
        "inductor_mode=max-autotune");
}

TEST_CASE("--inductor-mode without inductor in the dynamo axis, or an unknown name, is a usage error") {
  CHECK_THROWS_WITH_AS(expand({"--dynamo", "None", "--inductor-mode", "max-autotune"}),
                       doctest::Contains("--inductor-mode: applies to --dynamo=inductor configs"),
                       usage_error);
  CHECK_THROWS_AS(expand({"--precision", "fp8"}), usage_error);
  CHECK_THROWS_WITH_AS(
      experiment_config::from_config_json(
          R"({"accelerator": "cpu", "xla": null, "xla_flags": null, "dynamo": null, )"
          R"("torch_xla2": null, "test": "eval", "precision": "half"})"),
      doctest::Contains("'precision' must be one of auto, float32"), std::runtime_error);
}
