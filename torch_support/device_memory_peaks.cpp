#include "torch_support/device_memory_peaks.hpp"

#include <c10/cuda/CUDACachingAllocator.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace benchmatrix {
namespace {

constexpr auto aggregate = static_cast<size_t>(c10::CachingDeviceAllocator::StatType::AGGREGATE);

/// Per device: the largest peak allocated that a reset_device_peaks has wiped, bytes.
struct folded_peaks {
  std::mutex mutex;
  std::map<c10::DeviceIndex, int64_t> allocated_bytes;
};

folded_peaks& folded() {
  static folded_peaks peaks;
  return peaks;
}

}  // namespace

void reset_device_peaks(c10::DeviceIndex index) {
  const int64_t peak = device_peaks_since_reset(index).allocated_bytes;
  {
    auto& f = folded();
    std::lock_guard<std::mutex> lock(f.mutex);
    int64_t& kept = f.allocated_bytes[index];
    kept = std::max(kept, peak);
  }
  c10::cuda::CUDACachingAllocator::resetPeakStats(index);
}

device_peaks device_peaks_since_reset(c10::DeviceIndex index) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
  return {stats.allocated_bytes[aggregate].peak, stats.reserved_bytes[aggregate].peak};
}

int64_t process_peak_allocated_bytes(c10::DeviceIndex index) {
  const int64_t since_reset = device_peaks_since_reset(index).allocated_bytes;
  auto& f = folded();
  std::lock_guard<std::mutex> lock(f.mutex);
  const auto kept = f.allocated_bytes.find(index);
  return kept == f.allocated_bytes.end() ? since_reset : std::max(kept->second, since_reset);
}

}  // namespace benchmatrix
