// Per-call timing of a kernel, shared by the LibTorch children of run_and_check and backend_bench:
// on CUDA each call between two CUDA events on the current stream, the L2 cache flushed (a 256 MB
// buffer zeroed) before every call outside the events; on the CPU steady_clock wall time, no flush.
#pragma once

#include <ATen/ATen.h>
#include <functional>
#include <vector>

namespace benchmatrix {

/// Waits for the device (no-op on the CPU).
void synchronize(const at::Device& device);

/// `warmup` untimed calls, then `trials` timed ones; milliseconds per call.
[[nodiscard]] std::vector<double> time_calls(const std::function<void()>& call, int warmup,
                                             int trials, bool l2_flush, const at::Device& device);

} // namespace benchmatrix
