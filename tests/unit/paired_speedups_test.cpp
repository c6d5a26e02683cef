// --paired-baseline's torch-free half: the ABBA order, which pairs count and their speedups, the
// record's "paired" key as the typed reader sees it, which configs pair and with what, and that
// only a sweep's timing child gets the baseline.
#include "backends/paired_baseline.hpp"
#include "core/paired_speedups.hpp"
#include "core/record.hpp"
#include "core/results_record.hpp"
#include "runner/child_job_options.hpp"
#include "runner/runner_cli.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace benchmatrix;

namespace {

experiment_config config(nullable_string dynamo, nullable_string xla = std::nullopt) {
  experiment_config e;
  e.accelerator = "cuda";
  e.test = "eval";
  e.dynamo = std::move(dynamo);
  e.xla = std::move(xla);
  return e;
}

}  // namespace

TEST_CASE("ABBA: the baseline first in even repeats, the experiment first in odd ones") {
  CHECK(baseline_runs_first(0));
  CHECK_FALSE(baseline_runs_first(1));
  CHECK(baseline_runs_first(2));
  CHECK_FALSE(baseline_runs_first(3));
  CHECK(std::string(paired_order_abba) == "ABBA");
}

TEST_CASE("speedups are baseline / experiment per counted pair; the warm-up pair does not count") {
  const auto paired =
      compute_paired_speedups("eager", {9.0, 4.0, 6.0, 3.0, NAN}, {1.0, 2.0, 2.0, 1.0, 1.0});
  CHECK(paired.baseline == "eager");
  CHECK(paired.order == "ABBA");
  CHECK(paired.speedups == std::vector<double>{2.0, 3.0, 3.0});  // repeat 0 and the NaN pair out
  CHECK(paired.speedup.median == 3.0);
  CHECK(paired.speedup.count == 3);
  CHECK(paired.speedup.low <= paired.speedup.median);
  CHECK(paired.speedup.median <= paired.speedup.high);
  CHECK(paired.speedup.confidence == 0.95);
  // one repeat: it is all there is
  CHECK(compute_paired_speedups("eager", {4.0}, {2.0}).speedups == std::vector<double>{2.0});
  CHECK_THROWS_AS((void)compute_paired_speedups("eager", {1.0, 2.0}, {1.0}), std::invalid_argument);
  CHECK_THROWS_AS((void)compute_paired_speedups("eager", {1.0, 0.0}, {1.0, 1.0}),
                  std::invalid_argument);
}

TEST_CASE("a record's paired key: strict and lenient parses accept it, paired() reads it") {
  record_identity id;
  id.suite_name = "torchbench";
  id.model_name = "resnet18";
  id.experiment = config("cudagraphs");
  id.accelerator_model = "NVIDIA H100 80GB HBM3";
  id.repeat = 3;
  id.timestamp = 1.5;
  json_document d;
  auto& a = d.GetAllocator();
  json_value metrics(rapidjson::kObjectType);
  json_value extras(rapidjson::kObjectType);
  const auto paired = compute_paired_speedups("eager", {3.0, 4.0, 6.0}, {1.0, 2.0, 2.0});
  extras.AddMember("paired", paired_speedups_json(paired, a), a);
  const std::string line = record_line(id, metrics, "VERIFIER_SKIPPED", &extras);
  CHECK(line.find(R"("paired": {"baseline": "eager", "order": "ABBA", "speedups": [2.0, 3.0], )"
                  R"("speedup": {"median": 2.5, )") != std::string::npos);
  for (const auto& record :
       {results_record::parse(line, "line 1"), results_record::parse_lenient(line, "line 1")}) {
    CHECK(record.to_line() == line);
    const auto back = record.paired();
    REQUIRE(back);
    CHECK(back->baseline == "eager");
    CHECK(back->speedups == paired.speedups);
    CHECK(back->speedup.median == paired.speedup.median);
    CHECK(back->speedup.low == paired.speedup.low);
    CHECK(back->speedup.high == paired.speedup.high);
    CHECK(back->speedup.count == 2);
  }
  // an unpaired record has none; a malformed one is refused naming the key
  extras.RemoveMember("paired");
  CHECK_FALSE(
      results_record::parse(record_line(id, metrics, "PASS", &extras), "l").paired().has_value());
  json_value bad = paired_speedups_json(paired, a);
  bad["speedup"]["low"].SetString("x");
  extras.AddMember("paired", bad, a);
  CHECK_THROWS_WITH_AS(
      (void)results_record::parse(record_line(id, metrics, "PASS", &extras), "line 4"),
      "line 4: 'paired.speedup.low': expected a number, found \"x\"", std::runtime_error);
}

TEST_CASE("which configs pair, and the baseline's config") {
  // eager vs cudagraphs: the baseline is the same config with dynamo null
  const auto baseline = paired_baseline_experiment(config("cudagraphs"), "eager");
  REQUIRE(baseline);
  CHECK(baseline->to_config_json() == config(std::nullopt).to_config_json());
  // a config whose backend is the baseline runs unpaired
  CHECK_FALSE(paired_baseline_experiment(config(std::nullopt), "eager").has_value());
  CHECK_FALSE(paired_baseline_experiment(config("torchscript"), "torchscript").has_value());
  // an XLA config pairs with a baseline that runs without XLA (lazytensor vs eager too)
  const auto xla = paired_baseline_experiment(config("openxla", "PJRT"), "eager");
  REQUIRE(xla);
  CHECK_FALSE(xla->xla.has_value());
  CHECK_FALSE(xla->dynamo.has_value());
  CHECK(paired_baseline_experiment(config(std::nullopt, "PJRT"), "eager").has_value());
  // the choices: eager and the backends without an XLA runtime
  const auto choices = paired_baseline_choices();
  CHECK(choices.front() == "eager");
  CHECK(std::find(choices.begin(), choices.end(), "torchscript") != choices.end());
  CHECK(std::find(choices.begin(), choices.end(), "openxla") == choices.end());
  CHECK(std::find(choices.begin(), choices.end(), "None") == choices.end());
  CHECK_THROWS_WITH_AS((void)paired_baseline_experiment(config("cudagraphs"), "nope"),
                       doctest::Contains("unknown backend 'nope' (choose from eager, "),
                       std::invalid_argument);
}

TEST_CASE("--paired-baseline reaches the timing child of a paired config only") {
  const std::vector<std::string> suites = {"dummy"};
  const auto options = parse_runner_options(
      {"--suite-name=dummy", "--paired-baseline=eager"}, suites, "/nonexistent");
  CHECK(options.paired_baseline == "eager");
  const auto job = [&](child_role role, nullable_string dynamo) {
    return make_child_job(options, role, "dummy", config(std::move(dynamo)), "dummy", "").settings;
  };
  CHECK(job(child_role::timing, "torchscript").paired_baseline == "eager");
  CHECK(job(child_role::timing, std::nullopt).paired_baseline.empty());   // its own baseline
  CHECK(job(child_role::verifier, "torchscript").paired_baseline.empty());  // verifies as before
  CHECK_THROWS_WITH_AS(
      parse_runner_options({"--suite-name=dummy", "--paired-baseline=nope"}, suites, "/x"),
      doctest::Contains("argument --paired-baseline: invalid choice: 'nope' (choose from"),
      usage_error);
}
