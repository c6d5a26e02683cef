// Peak memory (issue 26): VmHWM parsing, a record's peak figure (device before host, repeat 0 left
// out), the compression ratio and the memory-regression rule compare_runs flags with.
#include "core/host_peak_rss.hpp"
#include "core/results_record.hpp"
#include "output/record_figures.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace benchmatrix;

namespace {

results_record record_with(const std::string& metrics) {
  return results_record::parse(
      R"({"model": {"suite_name": "dummy", "model_name": "m"},)"
      R"( "experiment": {"accelerator": "cuda",)"
      R"( "accelerator_model": "NVIDIA H100", "xla": null, "xla_flags": null, "dynamo": null,)"
      R"( "torch_xla2": null, "keep_model_data_on_cuda": false, "test": "eval", "batch_size": 8,)"
      R"( "enable_functionalization": false},)"
      R"( "repeat": 3, "iterations_per_run": 1, "metrics": )" +
          metrics + R"(, "timestamp": 1.0, "verification_code": "VERIFIER_SKIPPED"})",
      "test record");
}

peak_memory_figure figure(double median, double min, double max,
                          peak_memory_kind kind = peak_memory_kind::device_allocated) {
  peak_memory_figure f;
  f.kind = kind;
  f.bytes.count = 3;
  f.bytes.median = median;
  f.bytes.min = min;
  f.bytes.max = max;
  return f;
}

}  // namespace

TEST_CASE("VmHWM is read in bytes from a /proc/self/status text") {
  CHECK(parse_vm_hwm_bytes("Name:\tx\nVmPeak:\t 999 kB\nVmHWM:\t  123456 kB\nVmRSS:\t 1 kB\n") ==
        123456LL * 1024);
  CHECK_FALSE(parse_vm_hwm_bytes("Name:\tx\nVmRSS:\t 1 kB\n"));  // not there (no /proc)
  CHECK_FALSE(parse_vm_hwm_bytes("VmHWM:\t garbage\n"));
#ifdef __linux__
  const auto own = host_peak_rss_bytes();  // this test process's own peak
  REQUIRE(own);
  CHECK(*own > 0);
#endif
}

TEST_CASE("a record's peak memory: device allocated before host RSS, repeat 0 left out") {
  const auto device = peak_memory_of(record_with(
      R"({"total_time": [1, 1, 1], "peak_device_allocated_bytes": [900, 100, 300],)"
      R"( "peak_device_reserved_bytes": [1000, 1000, 1000], "peak_host_rss_bytes": [5, 5, 5]})"));
  REQUIRE(device);
  CHECK(device->kind == peak_memory_kind::device_allocated);
  CHECK(device->bytes.median == 200);  // of 100 and 300: repeat 0 (900) is the warm-up
  CHECK(device->bytes.max == 300);
  const auto host = peak_memory_of(
      record_with(R"({"total_time": [1, 1, 1], "peak_host_rss_bytes": [7, 5, 5]})"));
  REQUIRE(host);
  CHECK(host->kind == peak_memory_kind::host_rss);
  CHECK(host->bytes.median == 5);
  CHECK_FALSE(peak_memory_of(record_with(R"({"total_time": [1, 1, 1]})")));  // --no-memory-pass
  CHECK_FALSE(peak_memory_of(record_with(R"({"error": "out of device memory"})")));
}

TEST_CASE("compression ratio: baseline peak / compiled peak, only between figures of one kind") {
  CHECK(*compression_ratio(figure(200, 200, 200), figure(100, 100, 100)) == doctest::Approx(2.0));
  CHECK(*compression_ratio(figure(100, 100, 100), figure(125, 125, 125)) == doctest::Approx(0.8));
  CHECK_FALSE(compression_ratio(figure(100, 100, 100),
                                figure(100, 100, 100, peak_memory_kind::host_rss)));
  CHECK_FALSE(compression_ratio(figure(100, 100, 100), figure(0, 0, 0)));
}

TEST_CASE("a memory regression: more than the threshold up and beyond the repeats' spread") {
  const auto old_run = figure(1000, 990, 1010);
  CHECK(compare_peak_memory(old_run, figure(1200, 1190, 1210)) == memory_change::regression);
  CHECK(compare_peak_memory(old_run, figure(1050, 1040, 1060)) == memory_change::none);  // 5%
  // 20% up in the median, but the repeats overlap: within the spread, not flagged
  CHECK(compare_peak_memory(old_run, figure(1200, 1000, 1300)) == memory_change::none);
  CHECK(compare_peak_memory(old_run, figure(800, 790, 810)) == memory_change::improvement);
  CHECK(compare_peak_memory(old_run, figure(1200, 1190, 1210), 0.25) == memory_change::none);
  CHECK(compare_peak_memory(old_run, figure(2000, 2000, 2000, peak_memory_kind::host_rss)) ==
        memory_change::none);  // device against host: not comparable
}

TEST_CASE("bytes are shown in binary units") {
  CHECK(bytes_text(512) == "512 B");
  CHECK(bytes_text(1536) == "1.5 KiB");
  CHECK(bytes_text(3.0 * 1024 * 1024 * 1024) == "3 GiB");
}
