// The end-of-sweep table shows what a user needs to trust a figure: the median with its bootstrap
// interval, the record's noise verdict ("—" without one) with its reasons under the table, and,
// when a record has them, its paired speedup (kind and verdict) and GPU-busy fraction.
#include "runner/summary_table.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace benchmatrix;

namespace {

/// A record line as the runner writes it (§5.2 key order), `metrics` and `extras` as JSON text.
std::string record_line(const std::string& model, const std::string& dynamo,
                        const std::string& metrics, const std::string& extras = "") {
  return R"({"model": {"suite_name": "torchbench", "model_name": ")" + model +
         R"("}, "experiment": {"accelerator": "cuda", "accelerator_model": "NVIDIA H100", )"
         R"("xla": null, "xla_flags": null, "dynamo": )" +
         dynamo +
         R"(, "torch_xla2": null, "keep_model_data_on_cuda": false, "test": "eval", )"
         R"("batch_size": 8, "enable_functionalization": false}, "repeat": 5, )"
         R"("iterations_per_run": 2, "metrics": )" +
         metrics + R"(, "timestamp": 1795324126.25, "verification_code": "VERIFIER_SKIPPED")" +
         extras + "}";
}

/// The line of the table that starts with `model`.
std::string row_of(const std::string& table, const std::string& model) {
  size_t start = 0;
  while (start < table.size()) {
    const size_t end = table.find('\n', start);
    const std::string line = table.substr(start, end - start);
    if (line.rfind(model + " ", 0) == 0)
      return line;
    start = end == std::string::npos ? table.size() : end + 1;
  }
  return "";
}

/// The cells of a table line: the text between runs of two or more spaces.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (start < line.size()) {
    size_t end = line.find("  ", start);
    if (end == std::string::npos)
      end = line.size();
    cells.push_back(line.substr(start, end - start));
    start = line.find_first_not_of(' ', end);
    if (start == std::string::npos)
      break;
  }
  return cells;
}

const std::string eager_metrics = R"({"total_time": [1.0, 0.02, 0.022, 0.021, 0.02], )"
                                  R"("per_iter_time": [0.5, 0.010, 0.011, 0.0105, 0.010]})";

} // namespace

TEST_CASE("older records: median, its interval and a dash for noise; no optional columns") {
  const std::string table = summary_table({record_line("alexnet", "null", eager_metrics)});
  CHECK(table.find("per-iter median ms  95% interval ms  noise  status") != std::string::npos);
  CHECK(table.find("paired speedup") == std::string::npos);
  CHECK(table.find("GPU busy") == std::string::npos);
  const std::string row = row_of(table, "alexnet");
  INFO(table);
  // median of 10, 11, 10.5, 10 ms; a bootstrap interval inside the samples' range
  CHECK(cells_of(row) == std::vector<std::string>{"alexnet", "eval", "cuda", "eager", "8", "10.250",
                                                  "10.000–11.000", "—", "VERIFIER_SKIPPED"});
  CHECK(table.find("95% interval: bootstrap interval of the median") != std::string::npos);
}

TEST_CASE("paired, noise and CUPTI keys become columns and notes") {
  const std::string cupti_metrics =
      R"({"total_time": [0.6, 0.01, 0.01, 0.01, 0.01], )"
      R"("per_iter_time": [0.3, 0.005, 0.005, 0.005, 0.005], )"
      R"("baseline_per_iter_time": [0.5, 0.0096, 0.0097, 0.0096, 0.0098], )"
      R"("cupti_per_iter_busy_time_s": [0.004, 0.0045, 0.0046, 0.0045, 0.0044], )"
      R"("cupti_per_iter_time_s": [0.006, 0.005, 0.005, 0.005, 0.005]})";
  const std::string paired =
      R"(, "paired": {"baseline": "eager", "order": "ABBA", "speedups": [1.9, 1.92, 1.95, 1.9], )"
      R"("speedup": {"median": 1.92, "low": 1.85, "high": 2.01, "confidence": 0.95, "count": 4}})";
  const std::string noisy =
      R"x(, "noise": {"verdict": "noisy", "reasons": ["repeats spread 12% (> 5%)"]})x";
  // Busy time without the CUPTI pass's own wall time (older records): the same rule.
  const std::string old_cupti_metrics =
      R"({"total_time": [1.0, 0.02, 0.02, 0.02, 0.02], )"
      R"("per_iter_time": [0.5, 0.010, 0.010, 0.010, 0.010], )"
      R"("cupti_per_iter_busy_time_s": [0.009, 0.008, 0.008, 0.008, 0.008]})";
  const std::string table =
      summary_table({record_line("bert", R"("cudagraphs")", cupti_metrics,
                                 paired + R"(, "noise": {"verdict": "quiet", "reasons": []})"),
                     record_line("llama", "null", old_cupti_metrics, noisy),
                     record_line("vgg", "null", eager_metrics)});
  CHECK(table.find("paired speedup [95%]") != std::string::npos);
  CHECK(table.find("GPU busy") != std::string::npos);
  INFO(table);
  // model .. batch, median, interval, paired speedup, noise, GPU busy, status
  const auto bert = cells_of(row_of(table, "bert"));
  REQUIRE(bert.size() == 11);
  CHECK(bert[7] == "1.92 [1.85–2.01] over eager, faster");
  CHECK(bert[8] == "quiet");
  CHECK(bert[9] == "0.90"); // median busy 4.5 ms / median timed 5.0 ms
  const auto llama = cells_of(row_of(table, "llama"));
  REQUIRE(llama.size() == 11);
  CHECK(llama[7] == "-");
  CHECK(llama[8] == "noisy");
  CHECK(llama[9] == "0.80"); // 8 ms busy / 10 ms timed
  const auto vgg = cells_of(row_of(table, "vgg"));
  REQUIRE(vgg.size() == 11);
  CHECK(vgg[8] == "—");
  CHECK(vgg[9] == "-");
  CHECK(table.find("noise (llama eager eval, noisy): repeats spread 12% (> 5%)") !=
        std::string::npos);
  CHECK(table.find("GPU busy: median CUPTI busy time per iteration (its own pass) / median "
                   "per-iter time of the timed repeats") != std::string::npos);
}

TEST_CASE("a paired speedup whose interval holds 1 is within noise") {
  const std::string paired =
      R"(, "paired": {"baseline": "eager", "order": "ABBA", "speedups": [1.0], )"
      R"("speedup": {"median": 1.03, "low": 0.97, "high": 1.08, "confidence": 0.95, "count": 4}})";
  const std::string table =
      summary_table({record_line("llama", R"("cudagraphs")", eager_metrics, paired)});
  CHECK(cells_of(row_of(table, "llama"))[7] == "1.03 [0.97–1.08] over eager, within noise");
}
