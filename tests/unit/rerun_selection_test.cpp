// --rerun MODEL[:BACKEND[:TEST]]: parsing, which planned configs a selector names, and the error
// for one that names none.
#include "core/argparse.hpp"
#include "runner/rerun_selection.hpp"

#include <doctest/doctest.h>

using namespace benchmatrix;

namespace {

planned_config config(const std::string& model, std::optional<std::string> dynamo,
                      const std::string& test) {
  planned_config c;
  c.suite = "torchbench";
  c.model = model;
  c.model_json = "{\"model_name\": \"" + model + "\"}";
  c.experiment.accelerator = "cpu";
  c.experiment.dynamo = std::move(dynamo);
  c.experiment.test = test;
  return c;
}

}  // namespace

TEST_CASE("a selector names a model, optionally a backend and a test") {
  const auto full = parse_rerun_selector("resnet18:inductor:eval");
  CHECK(full.model == "resnet18");
  CHECK(full.backend == "inductor");
  CHECK(full.test == "eval");
  const auto any_backend = parse_rerun_selector("resnet18:*:train");
  CHECK_FALSE(any_backend.backend);
  CHECK(any_backend.test == "train");
  const auto model_only = parse_rerun_selector("resnet18");
  CHECK_FALSE(model_only.backend);
  CHECK_FALSE(model_only.test);
  CHECK_THROWS_AS((void)parse_rerun_selector(""), usage_error);
  CHECK_THROWS_AS((void)parse_rerun_selector(":eager"), usage_error);
  CHECK_THROWS_AS((void)parse_rerun_selector("a:b:eval:x"), usage_error);
  CHECK_THROWS_WITH_AS((void)parse_rerun_selector("resnet18:eager:fast"),
                       doctest::Contains("invalid TEST 'fast'"), usage_error);
}

TEST_CASE("rerun_keys picks the named configs and rejects a selector that names none") {
  runner_options options;
  options.suite_names = {"torchbench"};
  const std::vector<planned_config> configs = {
      config("alexnet", std::nullopt, "eval"), config("alexnet", "inductor", "eval"),
      config("resnet18", std::nullopt, "eval"), config("resnet18", std::nullopt, "train")};
  CHECK(selects(parse_rerun_selector("alexnet:eager"), configs[0]));
  CHECK_FALSE(selects(parse_rerun_selector("alexnet:eager"), configs[1]));
  CHECK(selects(parse_rerun_selector("alexnet:inductor:eval"), configs[1]));
  const auto keys = rerun_keys({parse_rerun_selector("resnet18")}, configs, options);
  CHECK(keys == std::set<std::string>{placement_free_key(configs[2], options),
                                      placement_free_key(configs[3], options)});
  CHECK_THROWS_WITH_AS((void)rerun_keys({parse_rerun_selector("alexnet:eager:train")}, configs,
                                        options),
                       doctest::Contains("'alexnet:eager:train' names no config"), usage_error);
}
