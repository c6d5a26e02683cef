// The key-averages table: self times from nesting, device time attached through correlation ids,
// totals that add up, torch's formatting.
#include "profiler/kernel_summary.hpp"
#include "profiler/op_table.hpp"

#include <doctest/doctest.h>

using namespace benchmatrix;

namespace {
profiled_event cpu(const char* name, int64_t start, int64_t end, uint64_t id, uint64_t thread = 1) {
  return {name, false, thread, start, end, id, 0};
}
profiled_event kernel(const char* name, int64_t start, int64_t end, uint64_t op) {
  return {name, true, 0, start, end, 0, op};
}
const op_row& row(const op_table& t, const std::string& name) {
  for (const auto& r : t.rows)
    if (r.name == name) return r;
  FAIL("no row " << name);
  return t.rows.front();
}
}  // namespace

TEST_CASE("self CPU is duration minus direct children; CUDA time follows correlation ids") {
  // aten::linear [0, 100] > aten::addmm [10, 60] > cudaLaunchKernel [20, 30] (runtime, linked)
  //                       > aten::relu [70, 90]; a second thread's aten::relu [0, 5].
  std::vector<profiled_event> events = {
      cpu("aten::linear", 0, 100, 1), cpu("aten::addmm", 10, 60, 2),
      {"cudaLaunchKernel", false, 99, 20, 30, 50, 2},  // runtime event: joins addmm's thread
      cpu("aten::relu", 70, 90, 3),  cpu("aten::relu", 0, 5, 4, /*thread=*/2),
      kernel("gemm", 1000, 1400, 2), kernel("relu_kernel", 1500, 1600, 3),
      kernel("orphan", 2000, 2010, 77)};  // links to no op: a row, attached to nothing
  const auto t = key_averages(events);
  CHECK(row(t, "aten::linear").self_cpu_ns == 100 - 50 - 20);
  CHECK(row(t, "aten::addmm").self_cpu_ns == 50 - 10);
  CHECK(row(t, "cudaLaunchKernel").self_cpu_ns == 10);
  CHECK(row(t, "aten::relu").calls == 2);
  CHECK(row(t, "aten::relu").self_cpu_ns == 20 + 5);
  CHECK(row(t, "aten::addmm").self_device_ns == 400);
  CHECK(row(t, "aten::linear").self_device_ns == 0);
  CHECK(row(t, "aten::linear").device_total_ns == 500);  // addmm's and relu's kernels
  CHECK(row(t, "gemm").device_total_ns == 400);
  CHECK(row(t, "gemm").cpu_total_ns == 0);
  // Totals: self CPU sums to the top-level durations; self CUDA to all device events.
  CHECK(t.self_cpu_total_ns == 100 + 5);
  CHECK(t.self_device_total_ns == 400 + 100 + 10);
  CHECK(t.has_device);
  CHECK(t.rows.front().name == "aten::linear");  // sorted by CUDA total
}

TEST_CASE("the table has torch's columns, units and footer; CUDA columns only with device events") {
  const auto cpu_only = key_averages({cpu("aten::mm", 0, 1500, 1), cpu("aten::add", 2000, 2003, 2)});
  const auto text = format_op_table(cpu_only);
  CHECK(text.find("Self CPU %") != std::string::npos);
  CHECK(text.find("# of Calls") != std::string::npos);
  CHECK(text.find("Self CUDA") == std::string::npos);
  CHECK(text.find("1.500us") != std::string::npos);
  CHECK(text.find("99.80%") != std::string::npos);  // 1500 / 1503
  CHECK(text.find("Self CPU time total: 1.503us") != std::string::npos);
  const auto with_device = format_op_table(key_averages({cpu("aten::mm", 0, 2'000'000, 1),
                                                         kernel("gemm", 0, 3'000'000'000, 1)}));
  CHECK(with_device.find("Self CUDA time total: 3.000s") != std::string::npos);
  CHECK(with_device.find("2.000ms") != std::string::npos);
}

TEST_CASE("kernel busy time counts overlaps once and gaps not at all") {
  using kind = device_activity_kind;
  const auto s = summarise_activities({{"a", kind::kernel, 100, 200},
                                       {"b", kind::kernel, 150, 250},
                                       {"a", kind::kernel, 400, 500},
                                       {"dropped", kind::kernel, 0, 0}},
                                      /*top_count=*/1);
  CHECK(s.kernels == 3);
  CHECK(s.kernel_time_ns == 100 + 100 + 100);
  CHECK(s.busy_time_ns == 150 + 100);
  CHECK(s.memory_ops == 0);
  CHECK(s.dropped == 1);
  REQUIRE(s.top.size() == 1);
  CHECK(s.top[0].name == "a");
  CHECK(s.top[0].calls == 2);
}

TEST_CASE("busy time includes the device's memsets and memcpys between kernels") {
  // A captured train step: kernel, memset node (a zeroed buffer), kernel, memcpy node. The device
  // is busy during the memory operations too; they are not kernels in the count or the top list.
  using kind = device_activity_kind;
  const auto s = summarise_activities({{"conv", kind::kernel, 100, 200},
                                       {"Memset", kind::memset, 210, 240},
                                       {"relu", kind::kernel, 250, 300},
                                       {"Memcpy DtoD", kind::memcpy, 290, 320},
                                       {"Memset", kind::memset, 0, 0}},
                                      /*top_count=*/10);
  CHECK(s.kernels == 2);
  CHECK(s.kernel_time_ns == 100 + 50);
  CHECK(s.memory_ops == 2);
  CHECK(s.memory_op_time_ns == 30 + 30);
  CHECK(s.busy_time_ns == 100 + 30 + 50 + 20);  // the memcpy overlaps relu's last 10 ns
  CHECK(s.dropped == 1);
  REQUIRE(s.top.size() == 2);
  CHECK(s.top[0].name == "conv");
  CHECK(s.top[1].name == "relu");
}
