// The job file a sweep's child runs from: every setting survives the round trip, a damaged job is
// refused with the key and the type it expected, and a config run by hand builds the job its
// sweep's child gets.
#include "core/child_job.hpp"
#include "runner/child_job_options.hpp"
#include "runner/runner_cli.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace benchmatrix;

namespace {

child_job sample_job() {
  child_job job;
  job.role = child_role::verifier;
  job.suite_name = "torchbench";
  job.model_name = "resnet50";
  job.experiment.accelerator = "cuda";
  job.experiment.xla = "PJRT";
  job.experiment.dynamo = "openxla";
  job.experiment.test = "train";
  job.experiment.enable_functionalization = true;
  job.timestamp = 1700000000.25;
  job.result_path = "/tmp/benchmatrix-x/config-3-verifier/result.json";
  child_settings& s = job.settings;
  s.repeat = 4;
  s.iterations_per_run = 3;
  s.pure_wall_time = true;
  s.paired_baseline = "eager";
  s.batch_size = 7;
  s.matmul_precision = "high";
  s.backend_library = "/opt/lib.so";
  s.cache_dir = "out/compile_cache";
  s.cold_start = true;
  s.cpus = "4-7";
  s.verify_iterations = 2;
  s.verify_deterministic = true;
  s.verify_tolerance = 0.125;
  s.accuracy_metric = true;
  s.accuracy_baseline = "inductor";
  s.accuracy_atol = 1e-05;
  s.profile_cupti = true;
  s.memory_pass = false;  // default true: the round trip must carry a changed value
  s.save_ir_format = "hlo";
  s.log_level = "debug";
  s.output_basename = "r.jsonl";
  s.export_what = "both";
  s.export_dir = "/tmp/export";
  return job;
}

}  // namespace

TEST_CASE("a child job survives the JSON round trip field for field") {
  const child_job job = sample_job();
  const std::string text = child_job_to_json(job);
  const child_job back = child_job_from_json(text, "job");
  CHECK(back.role == child_role::verifier);
  CHECK(back.suite_name == "torchbench");
  CHECK(back.model_name == "resnet50");
  CHECK(back.experiment.to_config_json() == job.experiment.to_config_json());
  CHECK(back.timestamp == 1700000000.25);
  CHECK(back.result_path == job.result_path);
  CHECK(back.settings.repeat == 4);
  CHECK(back.settings.batch_size == 7);
  CHECK(back.settings.paired_baseline == "eager");
  CHECK(back.settings.matmul_precision == "high");
  CHECK(back.settings.verify_tolerance == 0.125);
  CHECK(back.settings.verify_deterministic);
  CHECK(back.settings.accuracy_baseline == "inductor");
  CHECK_FALSE(back.settings.accuracy_rtol.has_value());
  CHECK(back.settings.accuracy_atol == 1e-05);
  CHECK(back.settings.profile_cupti);
  CHECK_FALSE(back.settings.memory_pass);
  CHECK_FALSE(back.settings.profile_cuda_cpu);
  CHECK(back.settings.export_dir == "/tmp/export");
  CHECK(back.settings.cpus == "4-7");
  // writing it again gives the same text: no field is dropped or defaulted on the way
  CHECK(child_job_to_json(back) == text);
  // so does a timing job with every setting at its default (unset optionals are null)
  child_job plain;
  plain.experiment.accelerator = "cpu";
  plain.experiment.test = "eval";
  const child_job plain_back = child_job_from_json(child_job_to_json(plain), "job");
  CHECK(plain_back.role == child_role::timing);
  CHECK_FALSE(plain_back.settings.batch_size.has_value());
  CHECK(child_job_to_json(plain_back) == child_job_to_json(plain));
}

TEST_CASE("a compile-ahead job keeps its role") {
  child_job job = sample_job();
  job.role = child_role::compile_ahead;
  CHECK(child_job_from_json(child_job_to_json(job), "job").role == child_role::compile_ahead);
}

TEST_CASE("a job file is written and read back") {
  const auto path = std::filesystem::temp_directory_path() / "benchmatrix-child-job-test.json";
  write_child_job_file(path, sample_job());
  CHECK(read_child_job_file(path).model_name == "resnet50");
  std::filesystem::remove(path);
  const std::string missing = "job file " + path.string() + ": no such file";
  CHECK_THROWS_WITH_AS(read_child_job_file(path), missing.c_str(), std::runtime_error);
}

TEST_CASE("a damaged job names the key and the type it expected") {
  std::string text = child_job_to_json(sample_job());
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  CHECK_THROWS_WITH_AS(child_job_from_json(replaced("\"repeat\": 4", "\"repeat\": \"4\""), "job file j"),
                       "job file j: key 'settings.repeat': expected an integer", std::runtime_error);
  CHECK_THROWS_WITH_AS(child_job_from_json(replaced("\"role\": \"verifier\"", "\"role\": \"judge\""), "job file j"),
                       "job file j: key 'role': expected \"timing\", \"verifier\" or "
                       "\"compile_ahead\"",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(child_job_from_json(replaced("\"cold_start\": true", "\"cold_start\": 1"), "job file j"),
                       "job file j: key 'settings.cold_start': expected true or false", std::runtime_error);
  CHECK_THROWS_WITH_AS(child_job_from_json(replaced("\"batch_size\": 7", "\"batch_size\": 7.5"), "job file j"),
                       "job file j: key 'settings.batch_size': expected an integer or null", std::runtime_error);
  CHECK_THROWS_WITH_AS(child_job_from_json(replaced("\"model_name\": \"resnet50\", ", ""), "job file j"),
                       "job file j: missing key 'model_name'", std::runtime_error);
  CHECK_THROWS_WITH_AS(child_job_from_json(replaced("\"save_output\"", "\"save_outputs\""), "job file j"),
                       doctest::Contains("job file j: missing key 'settings.save_output'"), std::runtime_error);
  CHECK_THROWS_WITH_AS(child_job_from_json(replaced("\"role\"", "\"colour\": 1, \"role\""), "job file j"),
                       "job file j: unknown key 'colour'", std::runtime_error);
  CHECK_THROWS_WITH_AS(child_job_from_json(replaced("\"test\": \"train\"", "\"test\": \"bench\""), "job file j"),
                       doctest::Contains("job file j: key 'experiment': --experiment-config: 'test'"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(child_job_from_json("[1]", "job file j"), "job file j: expected a JSON object",
                       std::runtime_error);
  CHECK_THROWS_AS(child_job_from_json("{\"role\": ", "job file j"), std::runtime_error);
}

TEST_CASE("--job is a child's only flag; a hand-run config builds the same job as the sweep's") {
  const std::vector<std::string> suites = {"dummy"};
  CHECK(parse_runner_options({"--job=/tmp/j.json"}, suites, "/nonexistent").job_file ==
        "/tmp/j.json");
  CHECK_THROWS_WITH_AS(
      parse_runner_options({"--job=/tmp/j.json", "--repeat=2"}, suites, "/nonexistent"),
      doctest::Contains("argument --job: a sweep's child takes no other flag"), usage_error);

  // What the `Run with ...` line's flags, appended to the sweep's command, run by hand.
  const std::string experiment =
      "{\"accelerator\": \"cpu\", \"xla\": null, \"xla_flags\": null, \"dynamo\": null, "
      "\"torch_xla2\": null, \"test\": \"eval\", \"keep_model_data_on_cuda\": false, "
      "\"enable_functionalization\": false}";
  const std::vector<std::string> sweep = {"--suite-name=dummy", "--repeat=3", "--metrics=accuracy",
                                          "--output-dirname=out", "--timestamp=12.5"};
  auto by_hand = sweep;
  by_hand.push_back("--experiment-config=" + experiment);
  by_hand.push_back("--model-config={\"model_name\": \"dummy\"}");
  const child_job hand = hand_run_job(parse_runner_options(by_hand, suites, "/nonexistent"));
  const child_job child = make_child_job(parse_runner_options(sweep, suites, "/nonexistent"),
                                         child_role::timing, "dummy",
                                         experiment_config::from_config_json(experiment),
                                         "dummy", /*result_path=*/"");
  CHECK(child_job_to_json(hand) == child_job_to_json(child));
  CHECK(hand.settings.repeat == 3);
  CHECK(hand.settings.accuracy_metric);
  CHECK(hand.timestamp == 12.5);
  CHECK(hand.result_path.empty());  // no parent: the record goes to the results file

  by_hand.back() = "--model-config={\"name\": \"dummy\"}";
  CHECK_THROWS_WITH_AS(hand_run_job(parse_runner_options(by_hand, suites, "/nonexistent")),
                       doctest::Contains("--model-config: expected {\"model_name\": \"<name>\"}"),
                       std::runtime_error);
}

TEST_CASE("a config of a several-suite sweep run by hand names its suite in --model-config") {
  const std::vector<std::string> suites = {"dummy", "exported", "torchbench"};
  const std::string experiment =
      "{\"accelerator\": \"cpu\", \"xla\": null, \"xla_flags\": null, \"dynamo\": null, "
      "\"torch_xla2\": null, \"test\": \"eval\", \"keep_model_data_on_cuda\": false, "
      "\"enable_functionalization\": false}";
  auto hand = [&](const std::string& suite_name, const std::string& model_config) {
    return hand_run_job(parse_runner_options(
        {"--suite-name=" + suite_name, "--model-path=/m.pt", "--experiment-config=" + experiment,
         "--model-config=" + model_config},
        suites, "/nonexistent"));
  };
  const auto job = hand("exported,torchbench",
                        R"({"suite_name": "torchbench", "model_name": "resnet18"})");
  CHECK(job.suite_name == "torchbench");
  CHECK(job.model_name == "resnet18");
  CHECK(job.settings.model_path.empty());  // --model-path is the exported suite's only
  const auto exported =
      hand("exported,torchbench", R"({"suite_name": "exported", "model_name": "mine"})");
  CHECK(exported.suite_name == "exported");
  CHECK(exported.settings.model_path == "/m.pt");
  CHECK(hand("exported", R"({"model_name": "mine"})").suite_name == "exported");
  CHECK_THROWS_WITH_AS(hand("exported,torchbench", R"({"model_name": "resnet18"})"),
                       "--model-config: --suite-name lists several suites (exported, torchbench); "
                       "name the model's suite: {\"suite_name\": \"<suite>\", \"model_name\": "
                       "\"resnet18\"}",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(hand("exported,torchbench", R"({"suite_name": "dummy", "model_name": "d"})"),
                       "--model-config: suite_name 'dummy' is not a suite of --suite-name "
                       "(exported, torchbench)",
                       std::runtime_error);
}
