// results_record: the one reader and writer of a results.jsonl line reads every record the runner
// writes and writes it back byte for byte.
#include "core/record.hpp"
#include "core/results_record.hpp"
#include "runner/verification_record.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace benchmatrix;

namespace {

const std::string head =
    R"({"model": {"suite_name": "torchbench", "model_name": "alexnet"}, "experiment": )"
    R"({"accelerator": "cuda", "accelerator_model": "NVIDIA H100 80GB HBM3", "xla": null, )"
    R"("xla_flags": null, "dynamo": "inductor", "torch_xla2": null, "keep_model_data_on_cuda": )"
    R"(false, "test": "eval", "batch_size": 128, "enable_functionalization": false}, "repeat": 3, )"
    R"("iterations_per_run": 2, )";

const std::string timing_line =
    head + R"("metrics": {"total_time": [1.25, 0.0125, 0.01], "per_iter_time": [0.625, 0.00625, )"
           R"(0.005], "xla_CompileTime_number": [17, 1, 0], "dynamo_counters": [{"stats": )"
           R"({"calls": 1}}], "compile_time_s": 3.5}, "timestamp": 1732431600.123456, )"
           R"("verification_code": "VERIFIER_SKIPPED"})";

const std::string verified_line =
    head + R"("metrics": {"total_time": [NaN, Infinity, -Infinity], "per_iter_time": [NaN, )"
           R"(Infinity, -Infinity], "verification": {"tolerance": 0.01, "max_abs_error": 0.0, )"
           R"("message": "naïve \"quoted\"\nline"}}, "timestamp": 1e-05, "verification_code": "PASS", )"
           R"("placement": {"host": "gpu-7", "device": "0", "children_beside": 1, "wall_time_s": 12.5}})";

/// What results_record::parse throws for `line` (read as `where`), or "(no error)".
std::string parse_error_of(const std::string& line, const std::string& where) {
  try {
    (void)results_record::parse(line, where);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("reading and writing back a record gives the same bytes") {
  for (const auto& line : {timing_line, verified_line}) {
    CAPTURE(line);
    CHECK(results_record::parse(line, "results.jsonl:1").to_line() == line);
  }
}

TEST_CASE("the error records the parent writes read back as written, with typed fields") {
  record_identity id;
  id.suite_name = "torchbench";
  id.model_name = "dlrm";
  id.experiment.accelerator = "cpu";
  id.experiment.test = "train";
  id.accelerator_model = "AMD EPYC 7B13";
  id.repeat = 5;
  id.timestamp = 1732431600.5;
  const auto line = error_record_line(id, "SKIP: no GPU\nsecond line", "VERIFIER_SKIPPED");
  const auto record = results_record::parse(line, "line 3");
  CHECK(record.to_line() == line);
  CHECK(record.identity.model_name == "dlrm");
  CHECK(record.identity.experiment.test == "train");
  CHECK_FALSE(record.identity.batch_size.has_value());
  CHECK(record.error() == "SKIP: no GPU\nsecond line");
  CHECK(record.is_skip());
  CHECK_FALSE(record.is_failed());
  CHECK(record.per_iter_seconds().empty());
}

TEST_CASE("a verifier's outcome merged into a record reads back losslessly") {
  auto record = results_record::parse(timing_line, "timing record");
  merge_verification(record, parse_json(R"({"verification_code": "FAIL", "verification": )"
                                        R"({"tolerance": 0.01, "max_abs_error": 0.5}})",
                                        "verifier result"));
  const std::string merged = record.to_line();
  const auto typed = results_record::parse(merged, "merged");
  CHECK(typed.to_line() == merged);
  CHECK(typed.verification_code == "FAIL");
  // A top-level key after verification_code: metrics keeps only per-repeat lists.
  CHECK(typed.metric("verification") == nullptr);
  REQUIRE(typed.extra("verification") != nullptr);
  REQUIRE(typed.verification() != nullptr);
  CHECK((*typed.verification())["max_abs_error"].GetDouble() == 0.5);
}

TEST_CASE("numbers measured once per record: the value in repeat 0; earlier scalars still read") {
  json_document d;
  const json_value list = once_per_record_list(3.5, 3, d.GetAllocator());
  CHECK(to_python_json(list) == "[3.5, 0.0, 0.0]");
  CHECK(to_python_json(once_per_record_list(2.0, 1, d.GetAllocator())) == "[2.0]");
  CHECK(is_once_per_record_metric("compile_time_s"));
  CHECK(is_once_per_record_metric("accuracy_max_abs_error"));
  CHECK_FALSE(is_once_per_record_metric("total_time"));

  // This runner's layout: the list; an earlier version's (timing_line): the scalar 3.5.
  std::string listed = timing_line;
  const std::string scalar = "\"compile_time_s\": 3.5";
  listed.replace(listed.find(scalar), scalar.size(), "\"compile_time_s\": [3.5, 0.0, 0.0]");
  CHECK(results_record::parse(listed, "new").once_per_record("compile_time_s") == 3.5);
  CHECK(results_record::parse(timing_line, "old").once_per_record("compile_time_s") == 3.5);
  CHECK_FALSE(results_record::parse(timing_line, "old").once_per_record("accuracy").has_value());
  // An earlier version's metrics.verification is still found.
  const auto old_verified = results_record::parse(verified_line, "old");
  REQUIRE(old_verified.verification() != nullptr);
  CHECK((*old_verified.verification())["tolerance"].GetDouble() == 0.01);
}

TEST_CASE("typed accessors: per-repeat lists, per-iteration seconds, placement") {
  const auto timing = results_record::parse(timing_line, "t");
  CHECK(timing.identity.batch_size == 128);
  CHECK(timing.identity.iterations_per_run == 2);
  CHECK(*timing.identity.experiment.dynamo == "inductor");
  CHECK(timing.per_repeat("xla_CompileTime_number") == std::vector<double>{17, 1, 0});
  CHECK_FALSE(timing.per_repeat("compile_time_s").has_value());  // a number, not a list
  CHECK(timing.per_iter_seconds() == std::vector<double>{0.625, 0.00625, 0.005});
  CHECK_FALSE(timing.error().has_value());

  const auto verified = results_record::parse(verified_line, "v");
  const auto seconds = verified.per_iter_seconds();
  REQUIRE(seconds.size() == 3);
  CHECK(std::isnan(seconds[0]));
  CHECK(seconds[1] == INFINITY);
  REQUIRE(verified.extra("placement") != nullptr);
  CHECK(std::string((*verified.extra("placement"))["host"].GetString()) == "gpu-7");

  // Without per_iter_time, total_time over iterations_per_run.
  std::string total_only = timing_line;
  total_only.replace(total_only.find("\"per_iter_time\""), std::string(R"("per_iter_time": [0.625, 0.00625, 0.005], )").size(), "");
  CHECK(results_record::parse(total_only, "t").per_iter_seconds() ==
        std::vector<double>{0.625, 0.00625, 0.005});
}

TEST_CASE("a malformed line is an error naming where, the key and what was expected") {
  const auto error_of = [](const std::string& line) { return parse_error_of(line, "results.jsonl:7"); };
  std::string line = timing_line;
  line.replace(line.find(R"("repeat": 3)"), 11, R"("repeat": "3")");
  CHECK(error_of(line) == R"(results.jsonl:7: 'repeat': expected an integer, found "3")");
  line = timing_line;
  line.replace(line.find(R"("torch_xla2": null, )"), 20, "");
  CHECK(error_of(line) ==
        "results.jsonl:7: 'experiment.torch_xla2': expected the key here, found 'keep_model_data_on_cuda'");
  CHECK(error_of("[1, 2]") == "results.jsonl:7: '(record)': expected a JSON object");
  CHECK(error_of(R"({"model": {}})") ==
        "results.jsonl:7: 'experiment': expected the key here (the record ends before it)");
  CHECK(error_of("{\"model\": ").find("results.jsonl:7") != std::string::npos);
}

namespace {

// A record of the older Python runners (reference §5.4): experiment_name, no torch_xla2,
// keep_model_data_on_cuda or enable_functionalization, keys out of order, no timestamp or
// verification_code, outputs_file, a float batch size.
const std::string python_runner_line =
    R"({"experiment": {"experiment_name": "run_all", "accelerator": "cuda", "accelerator_model": )"
    R"("NVIDIA A100-SXM4-40GB", "xla": "PJRT", "xla_flags": null, "dynamo": "openxla", "test": )"
    R"("train", "batch_size": 8.0}, "model": {"suite_name": "torchbench", "model_name": "BERT_pytorch"}, )"
    R"("repeat": 2, "iterations_per_run": 4, "metrics": {"total_time": [2.0, 1.0]}, "outputs_file": null})";

std::string lenient_error_of(const std::string& line) {
  try {
    (void)results_record::parse_lenient(line, "results.jsonl:9");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("the lenient reader takes older runners' records, naming what they lack") {
  CHECK_THROWS(results_record::parse(python_runner_line, "strict"));  // not the §5.2 shape
  const auto r = results_record::parse_lenient(python_runner_line, "results.jsonl:9");
  CHECK(r.identity.model_name == "BERT_pytorch");
  CHECK(r.identity.suite_name == "torchbench");
  CHECK(r.identity.experiment.test == "train");
  CHECK(r.identity.experiment.xla == "PJRT");
  CHECK(r.identity.experiment.dynamo == "openxla");
  CHECK_FALSE(r.identity.experiment.torch_xla2.has_value());
  CHECK(r.identity.batch_size == 8);
  CHECK(r.identity.iterations_per_run == 4);
  CHECK(r.per_iter_seconds() == std::vector<double>{0.5, 0.25});
  CHECK(r.verification_code.empty());
  REQUIRE(r.extra("outputs_file") != nullptr);
  CHECK(r.extra("outputs_file")->IsNull());
  CHECK(r.extra("experiment_name") == nullptr);  // unknown experiment keys are not kept
  CHECK(r.absent == std::vector<std::string>{"experiment.torch_xla2",
                                             "experiment.keep_model_data_on_cuda",
                                             "experiment.enable_functionalization", "timestamp",
                                             "verification_code"});
  CHECK(r.has("experiment.xla_flags"));  // null is a value for the nullable keys
  CHECK_FALSE(r.has("timestamp"));
  CHECK(r.identity.timestamp == 0);

  // Only the model's name and the test are required; everything else gets its default.
  const auto bare = results_record::parse_lenient(
      R"({"model": {"model_name": "m"}, "experiment": {"test": "eval"}, "timestamp": null})", "x");
  CHECK(bare.identity.repeat == 10);
  CHECK(bare.identity.iterations_per_run == 1);
  CHECK(bare.metrics.ObjectEmpty());
  CHECK_FALSE(bare.has("metrics"));
  CHECK_FALSE(bare.has("timestamp"));  // null is no timestamp
  CHECK_FALSE(bare.has("experiment.batch_size"));
  CHECK_FALSE(bare.identity.batch_size.has_value());

  // A record this runner writes reads the same either way.
  const auto strict = results_record::parse(timing_line, "s");
  const auto lenient = results_record::parse_lenient(timing_line, "l");
  CHECK(lenient.absent.empty());
  CHECK(lenient.to_line() == timing_line);
  CHECK(lenient.to_line() == strict.to_line());
  CHECK(results_record::parse_lenient(verified_line, "v").to_line() == verified_line);
}

TEST_CASE("the lenient reader rejects a line no report can use, naming the line and the key") {
  CHECK(lenient_error_of(R"({"experiment": {"test": "eval"}, "model": {"suite_name": "s"}})") ==
        "results.jsonl:9: 'model.model_name': expected a string (the record has none)");
  CHECK(lenient_error_of(R"({"model": {"model_name": "m"}, "experiment": {"dynamo": null}})") ==
        "results.jsonl:9: 'experiment.test': expected a string (the record has none)");
  CHECK(lenient_error_of(R"({"model": {"model_name": "m"}})") ==
        "results.jsonl:9: 'experiment': expected an object (the record has none)");
  CHECK(lenient_error_of(R"({"model": {"model_name": "m"}, "experiment": {"test": "eval", )"
                         R"("batch_size": 8.5}})") ==
        "results.jsonl:9: 'experiment.batch_size': expected an integer, found 8.5");
  CHECK(lenient_error_of(R"({"model": {"model_name": "m"}, "experiment": {"test": "eval"}, )"
                         R"("timestamp": "yesterday"})") ==
        R"(results.jsonl:9: 'timestamp': expected a number, found "yesterday")");
  CHECK(lenient_error_of(R"({"model": {"model_name": "m"}, "experiment": {"test": "eval"}, )"
                         R"("metrics": [1]})") ==
        "results.jsonl:9: 'metrics': expected an object, found [1]");
  CHECK(lenient_error_of("[1, 2]") == "results.jsonl:9: '(record)': expected a JSON object");
}

TEST_CASE("precision and Inductor mode: in the experiment object only where not at their defaults") {
  // A default config's record is the original's: no new keys (resume against a Python runner's
  // file and its analyzers keep working).
  CHECK(timing_line.find("precision") == std::string::npos);
  auto record = results_record::parse(timing_line, "results.jsonl:1");
  CHECK(record.identity.experiment.precision == "auto");
  CHECK(record.identity.experiment.inductor_mode == "default");
  record.identity.experiment.precision = "amp_bf16";
  record.identity.experiment.inductor_mode = "max-autotune";
  const std::string line = record.to_line();
  CHECK(line.find(R"("enable_functionalization": false, "precision": "amp_bf16", )"
                  R"("inductor_mode": "max-autotune"}, "repeat": 3)") != std::string::npos);
  // both readers take them back, and writing gives the same bytes
  CHECK(results_record::parse(line, "results.jsonl:1").to_line() == line);
  const auto lenient = results_record::parse_lenient(line, "results.jsonl:1");
  CHECK(lenient.identity.experiment.precision == "amp_bf16");
  CHECK(lenient.identity.experiment.inductor_mode == "max-autotune");
}

TEST_CASE("a precision or mode outside the vocabulary, or another extra key, is an error naming it") {
  const auto error_of = [](const std::string& line) { return parse_error_of(line, "results.jsonl:3"); };
  const std::string at = R"("enable_functionalization": false)";
  std::string line = timing_line;
  line.replace(line.find(at), at.size(), at + R"(, "precision": "fp8")");
  CHECK(error_of(line) == "results.jsonl:3: 'experiment.precision': expected one of auto, float32, "
                          "bfloat16, float16, amp, amp_bf16, found 'fp8'");
  line = timing_line;
  line.replace(line.find(at), at.size(), at + R"(, "inductor_mode": "fast")");
  CHECK(error_of(line).find("'experiment.inductor_mode': expected one of default, max-autotune") !=
        std::string::npos);
  line = timing_line;
  line.replace(line.find(at), at.size(), at + R"(, "dtype": "float32")");
  CHECK(error_of(line).find("found 'dtype'") != std::string::npos);
  // the order is fixed: inductor_mode after precision
  line = timing_line;
  line.replace(line.find(at), at.size(),
               at + R"(, "inductor_mode": "max-autotune", "precision": "float32")");
  CHECK(error_of(line).find("found 'precision'") != std::string::npos);
}
