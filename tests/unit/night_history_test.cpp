// The history of nights (output/night_history): a night read from its directory keeps its figures
// through the SQLite file, and importing is idempotent.
#include "core/text_file.hpp"
#include "output/night_history.hpp"

#include <doctest/doctest.h>
#include <filesystem>
#include <string>
#include <unistd.h>

using namespace benchmatrix;

namespace {

std::string record(const std::string& model, const std::string& dynamo, const std::string& times,
                   const std::string& tail) {
  return R"({"model": {"suite_name": "torchbench", "model_name": ")" + model +
         R"("}, "experiment": {"accelerator": "cpu", "accelerator_model": "AMD EPYC", "xla": null, )"
         R"("xla_flags": null, "dynamo": )" +
         dynamo +
         R"(, "torch_xla2": null, "keep_model_data_on_cuda": false, "test": "eval", )"
         R"("batch_size": 2, "enable_functionalization": false}, "repeat": 4, )"
         R"("iterations_per_run": 1, "metrics": )" +
         times + R"(, "timestamp": 1795514822.5, "verification_code": )" + tail + "}";
}

struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "night_history.XXXXXX");
    REQUIRE(mkdtemp(pattern.data()));
    path = pattern;
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};

} // namespace

TEST_CASE(
    "a night's figures survive the database; re-import is idempotent, a changed dir replaces") {
  temp_dir tmp;
  const auto night = tmp.path / "night_1";
  std::filesystem::create_directories(night);
  const std::string lines =
      record("alexnet", "null", R"({"per_iter_time": [0.5, 0.1, 0.12, 0.11]})",
             R"("PASS", "verification": {"rmse_vs_fp64": 3e-05, "cosine_similarity": 0.99999})") +
      "\n" +
      record("dcgan", "\"torchscript\"", R"({"error": "RuntimeError: boom\nmore"})",
             R"("VERIFIER_DIDNT_RUN")") +
      "\n";
  replace_text_file(night / "results.jsonl", lines);
  replace_text_file(
      night / "run_context.json",
      R"({"command": ["experiment_runner", "--repeat=4"], "torch_version": "2.11.0", )"
      R"("hostname": "vm", "started": 1795514800.0})");
  const auto warn = [](const std::string& m) { FAIL(m); };
  const auto loaded = read_night(night, warn);
  REQUIRE(loaded.configs.size() == 2);
  CHECK(loaded.info.started == 1795514800.0);
  CHECK(loaded.info.command == std::vector<std::string>{"experiment_runner", "--repeat=4"});
  CHECK(loaded.configs[0].config == "torchbench/alexnet/eval/eager/bs2/cpu:AMD EPYC");
  // The config apart from its machine: the key the gate matches another machine's runs by.
  CHECK(config_text_without_machine(loaded.configs[0]) == "torchbench/alexnet/eval/eager/bs2/cpu");
  CHECK(machine_text(loaded.configs[0]) == "cpu:AMD EPYC");

  night_history history(tmp.path / "h.sqlite");
  const auto first = history.import_night(loaded);
  CHECK_FALSE(first.already_known);
  CHECK(history.import_night(loaded).already_known);
  const auto nights = history.nights();
  REQUIRE(nights.size() == 1);
  CHECK(nights[0].host == "vm");
  CHECK(nights[0].torch_version == "2.11.0");
  const auto configs = history.configs_of(first.night_id);
  REQUIRE(configs.size() == 2);
  const auto& alexnet = configs[0];
  CHECK(alexnet.counted_repeats == std::vector<double>{0.1, 0.12, 0.11}); // repeat 0 left out
  REQUIRE(alexnet.state.timing);
  CHECK(alexnet.state.timing->interval.median == doctest::Approx(0.11));
  CHECK(alexnet.state.verification_code == "PASS");
  CHECK(*alexnet.state.accuracy.rmse_vs_fp64 == doctest::Approx(3e-5));
  CHECK(*alexnet.state.accuracy.cosine_distance == doctest::Approx(1e-5));
  CHECK(configs[1].state.result == night_state::outcome::failed);
  CHECK(configs[1].state.detail == "RuntimeError: boom");
  CHECK(configs[1].config == "torchbench/dcgan/eval/torchscript/bs2/cpu:AMD EPYC");

  // The same directory resumed (one more line): its import is replaced, not doubled.
  replace_text_file(night / "results.jsonl",
                    lines +
                        record("resnet18", "null", R"({"per_iter_time": [1, 2, 2, 2]})",
                               R"("VERIFIER_SKIPPED")") +
                        "\n");
  const auto again = history.import_night(read_night(night, warn));
  CHECK(again.replaced);
  REQUIRE(history.nights().size() == 1);
  CHECK(history.configs_of(again.night_id).size() == 3);
}

TEST_CASE("a directory without results.jsonl is named in the error") {
  temp_dir tmp;
  CHECK_THROWS_WITH_AS(read_night(tmp.path, [](const std::string&) {}),
                       doctest::Contains("has no results.jsonl"), std::runtime_error);
}
