// The key-averages table of a profiled run, computed the way torch.profiler's key_averages() does
// from Kineto events (torch/autograd/profiler.py _parse_kineto_results, profiler_util.py), because
// LibTorch has no table printer:
//  - frontend events (CPU, linked correlation 0) nest by time within their thread; self CPU time is
//    an event's duration minus its direct children's;
//  - device events (kernels, memcpy, memset) are attached to the frontend op whose correlation id
//    they link to: its self CUDA time; CUDA total adds its children's;
//  - runtime events (cudaLaunchKernel, linked to an op) join that op's thread as its children;
//  - device events are rows of their own too (CUDA time only), as in torch's tables.
// Torch-free: events come in as plain data, so the arithmetic is unit-tested without a profiler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace benchmatrix {

struct profiled_event {
  std::string name;
  bool on_device = false;          // a CUDA kernel/memcpy/memset (deviceType CUDA)
  uint64_t thread = 0;             // start thread id (CPU events)
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = 0;     // the event's own id (frontend ops)
  uint64_t linked_correlation = 0; // 0: a frontend op; else the op it belongs to
};

/// One row of the table: an event name's totals over all its occurrences. Nanoseconds.
struct op_row {
  std::string name;
  int64_t calls = 0;
  int64_t self_cpu_ns = 0;
  int64_t cpu_total_ns = 0;
  int64_t self_device_ns = 0;
  int64_t device_total_ns = 0;
};

struct op_table {
  std::vector<op_row> rows;       // sorted by CUDA total, then CPU total, descending; then by name
  int64_t self_cpu_total_ns = 0;  // torch's "Self CPU time total" (sum of self CPU)
  int64_t self_device_total_ns = 0;  // "Self CUDA time total" (sum of device events' durations)
  bool has_device = false;        // any device event (else the CUDA columns are left out)
};

[[nodiscard]] op_table key_averages(const std::vector<profiled_event>& events);

/// torch's EventList.table(sort_by="cuda_time_total", row_limit): Name, Self CPU %, Self CPU,
/// CPU total %, CPU total, CPU time avg, [Self CUDA, Self CUDA %, CUDA total, CUDA time avg,]
/// # of Calls, then the "Self CPU time total" (and CUDA) footer. Times as torch formats them
/// ("12.345us", "1.234ms", "1.234s").
[[nodiscard]] std::string format_op_table(const op_table& table, size_t row_limit = 500);

}  // namespace benchmatrix
