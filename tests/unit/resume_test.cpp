// The resume fingerprint matches the Python runner's, so files it wrote resume with us.
#include "core/python_json.hpp"
#include "core/results_record.hpp"
#include "runner/resume.hpp"

#include <doctest/doctest.h>

using namespace benchmatrix;

TEST_CASE("fingerprint of a Python-written record equals the original's string") {
  const auto record = parse_json(
      R"({"model": {"suite_name": "torchbench", "model_name": "alexnet"}, "experiment": )"
      R"({"accelerator": "cuda", "accelerator_model": "NVIDIA A100-SXM4-40GB", "xla": "PJRT", )"
      R"("xla_flags": null, "dynamo": "openxla", "torch_xla2": null, "keep_model_data_on_cuda": )"
      R"(false, "test": "eval", "batch_size": 128, "enable_functionalization": false}, "repeat": )"
      R"(10, "iterations_per_run": 1, "metrics": {}, "timestamp": 1.5, "verification_code": "PASS"})",
      "record");
  CHECK(fingerprint(record["model"], record["experiment"], std::nullopt) ==
        "torchbench-alexnet-cuda-NVIDIA A100-SXM4-40GB-PJRT-None-openxla-None-False-eval-False-None");
  // batch_size is never part of it; the current --batch-size is appended instead.
  CHECK(fingerprint(record["model"], record["experiment"], 8) ==
        "torchbench-alexnet-cuda-NVIDIA A100-SXM4-40GB-PJRT-None-openxla-None-False-eval-False-8");
}

TEST_CASE("failed records are retried with --retry-failed; SKIP records are not") {
  CHECK(is_failed_record(parse_json(R"({"metrics": {"error": "child killed by signal SIGSEGV"}})", "r")));
  CHECK_FALSE(is_failed_record(parse_json(R"({"metrics": {"error": "SKIP: no GPU"}})", "r")));
  CHECK_FALSE(is_failed_record(parse_json(R"({"metrics": {"total_time": [1.0]}})", "r")));
}

TEST_CASE("the placement-free fingerprint matches a config on any GPU or host, nothing else") {
  const auto on = [](const char* gpu, const char* test) {
    return parse_json(std::string(R"({"model": {"suite_name": "torchbench", "model_name": "alexnet"}, )"
                                  R"("experiment": {"accelerator": "cuda", "accelerator_model": ")") +
                          gpu + R"(", "dynamo": null, "test": ")" + test + R"(", "batch_size": 4}})",
                      "record");
  };
  const auto h100 = on("NVIDIA H100", "eval"), h200 = on("NVIDIA H200", "eval"),
             train = on("NVIDIA H100", "train");
  CHECK(placement_free_fingerprint(h100["model"], h100["experiment"], std::nullopt) ==
        placement_free_fingerprint(h200["model"], h200["experiment"], std::nullopt));
  CHECK(placement_free_fingerprint(h100["model"], h100["experiment"], std::nullopt) ==
        "torchbench-alexnet-cuda-None-eval-None");
  CHECK(placement_free_fingerprint(h100["model"], h100["experiment"], std::nullopt) !=
        placement_free_fingerprint(train["model"], train["experiment"], std::nullopt));
  // The resume fingerprint itself still tells the GPUs apart, as the original's does.
  CHECK(fingerprint(h100["model"], h100["experiment"], std::nullopt) !=
        fingerprint(h200["model"], h200["experiment"], std::nullopt));
}

TEST_CASE("a typed record's fingerprints equal those of its line") {
  const std::string line =
      R"({"model": {"suite_name": "torchbench", "model_name": "alexnet"}, "experiment": )"
      R"({"accelerator": "cuda", "accelerator_model": "NVIDIA A100-SXM4-40GB", "xla": "PJRT", )"
      R"("xla_flags": null, "dynamo": "openxla", "torch_xla2": null, "keep_model_data_on_cuda": )"
      R"(false, "test": "eval", "batch_size": 128, "enable_functionalization": false}, "repeat": )"
      R"(10, "iterations_per_run": 1, "metrics": {}, "timestamp": 1.5, "verification_code": "PASS"})";
  const auto json = parse_json(line, "record");
  const auto typed = results_record::parse(line, "record");
  for (const std::optional<long long> batch : {std::optional<long long>(), std::optional<long long>(8)}) {
    CHECK(fingerprint(typed.identity, batch) == fingerprint(json["model"], json["experiment"], batch));
    CHECK(placement_free_fingerprint(typed.identity, batch) ==
          placement_free_fingerprint(json["model"], json["experiment"], batch));
  }
}
