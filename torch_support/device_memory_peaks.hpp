// The CUDA caching allocator's peak statistics (c10::cuda::CUDACachingAllocator, the counters
// Python's torch.cuda.max_memory_allocated / max_memory_reserved read), for measurements that
// reset them: the memory pass before each repeat (worker/memory_pass.hpp), a CUDA graph capture
// before capture_begin (backends/cuda_graph_capture.hpp).
//
// The allocator keeps one peak per device, and a reset loses the peak so far. Every reset goes
// through reset_device_peaks, which first folds that peak into a peak of the whole process, so a
// reader that wants the child's peak (the out-of-memory error text) still gets it whichever
// measurement reset the counters last. Nothing here is called for the CPU.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

namespace benchmatrix {

/// Peaks of one CUDA device since its last reset_device_peaks, bytes.
struct device_peaks {
  int64_t allocated_bytes = 0;  // allocated_bytes[aggregate].peak: memory handed out to tensors
  int64_t reserved_bytes = 0;   // reserved_bytes[aggregate].peak: segments the allocator holds
};

/// Resets the peaks of CUDA device `index` to the current figures (resetPeakStats), after
/// folding the peak allocated so far into process_peak_allocated_bytes.
void reset_device_peaks(c10::DeviceIndex index);

/// The peaks of CUDA device `index` since its last reset_device_peaks (since the process started
/// when none was).
[[nodiscard]] device_peaks device_peaks_since_reset(c10::DeviceIndex index);

/// The peak allocated bytes of CUDA device `index` since the process started, whatever reset the
/// allocator's counters in between.
[[nodiscard]] int64_t process_peak_allocated_bytes(c10::DeviceIndex index);

}  // namespace benchmatrix
