// The device memory a backend's CUDA graph captures needed (issue 26), carried from the capture
// (backends/cuda_graph_capture) to the record (worker/memory_pass) through the backend's step
// (backend_step::graph_capture). Torch-free.
//
// Why the capture: a replay allocates nothing. The capture allocates the step's intermediates
// through the caching allocator into the graph's private pool and frees them back into it; every
// replay then writes into those same blocks without an allocator call, so the allocator's peak
// allocated during replays sees only the tensors alive outside them. The peak from capture_begin
// to capture_end does include the intermediates: it is what a replay needs (as PyTorch's
// dashboard, whose max_memory_allocated window includes the cudagraph recording).
//
// How: make_backend_step (backends/backend_selection.cpp) opens a capture_memory_scope around the
// step factory; each successful capture in between reports its peak to it (report_capture_peak).
#pragma once

#include <cstdint>
#include <optional>

namespace benchmatrix {

/// What the CUDA graph captures of one backend step's preparation needed.
struct capture_memory {
  int captures = 0;                  // CUDA graphs captured (the failed ones not counted)
  int64_t peak_allocated_bytes = 0;  // the largest capture's peak allocated bytes, everything
                                     // alive at the capture (weights, inputs) included
};

/// Collects, while it lives, the peaks that captures on this thread report. Scopes nest: a capture
/// reports to every open one.
class capture_memory_scope {
public:
  capture_memory_scope();
  ~capture_memory_scope();
  capture_memory_scope(const capture_memory_scope&) = delete;  // registered by address
  capture_memory_scope& operator=(const capture_memory_scope&) = delete;

  /// What was reported while this scope was open; nullopt when nothing was captured (eager, any
  /// backend on the CPU, a capture that failed).
  [[nodiscard]] std::optional<capture_memory> seen() const;

private:
  friend void report_capture_peak(int64_t peak_allocated_bytes);
  capture_memory m_seen;
  capture_memory_scope* m_outer;  // the scope open before this one on this thread, or null
};

/// Called by a capture once it succeeded, with the caching allocator's peak allocated bytes from
/// right before capture_begin to right after capture_end. Nothing happens when no scope is open.
void report_capture_peak(int64_t peak_allocated_bytes);

}  // namespace benchmatrix
