#include "kernel_check/call_timing.hpp"

#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <chrono>
#include <torch/cuda.h>

namespace benchmatrix {

void synchronize(const at::Device& device) {
  if (device.is_cuda())
    torch::cuda::synchronize(device.index());
}

/// Per-call milliseconds: CUDA events around each call after an L2 flush (outside the events), or
/// steady_clock wall time on the CPU.
std::vector<double> time_calls(const std::function<void()>& call, int warmup, int trials,
                               bool l2_flush, const at::Device& device) {
  for (int i = 0; i < warmup; ++i)
    call();
  synchronize(device);
  std::vector<double> ms;
  if (!device.is_cuda()) {
    for (int i = 0; i < trials; ++i) {
      const auto start = std::chrono::steady_clock::now();
      call();
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    return ms;
  }
  constexpr int64_t flush_bytes = 256LL * 1024 * 1024; // larger than any GPU's L2 (H100: 50 MB)
  at::Tensor cache;
  if (l2_flush)
    cache = at::empty({flush_bytes / 4}, at::TensorOptions().dtype(at::kInt).device(device));
  const c10::impl::VirtualGuardImpl guard(device.type());
  const c10::Stream stream = guard.getStream(device);
  std::vector<c10::Event> starts, ends;
  for (int i = 0; i < trials; ++i) {
    starts.emplace_back(device.type(), c10::EventFlag::BACKEND_DEFAULT);
    ends.emplace_back(device.type(), c10::EventFlag::BACKEND_DEFAULT);
  }
  for (int i = 0; i < trials; ++i) {
    if (l2_flush)
      cache.zero_();
    starts[i].record(stream);
    call();
    ends[i].record(stream);
  }
  synchronize(device);
  for (int i = 0; i < trials; ++i)
    ms.push_back(starts[i].elapsedTime(ends[i]));
  return ms;
}

} // namespace benchmatrix
