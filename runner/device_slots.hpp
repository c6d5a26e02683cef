// --devices: the GPUs a sweep spreads its children over, one child per GPU at a time
// (CUDA_VISIBLE_DEVICES pins each child), and which of them are free right now.
#pragma once

#include "core/argparse.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

/// The device ids of a --devices value: "all" (every GPU nvidia-smi lists, as `gpu_count` says) or
/// comma-separated non-negative indices in nvidia-smi numbering, each at most once. With GPUs
/// present an index must exist; with none (`gpu_count` 0) any index is accepted: the children are
/// pinned to nothing and the list only sets how many run at once (how CI tests concurrency).
/// Throws usage_error naming the bad item.
[[nodiscard]] std::vector<std::string> parse_device_list(const std::string& value, size_t gpu_count);

/// Which listed devices hold a child. A device is taken by a config from its timing child's start to
/// its record (its verifier child, when --verify, runs on the same device), so at most one config
/// runs per device; `exclusive` (--exclusive) allows one config on the whole host.
class device_slots {
public:
  device_slots(std::vector<std::string> devices, bool exclusive);

  /// A free device (the lowest listed), taken; nullopt when every slot is busy.
  [[nodiscard]] std::optional<std::string> acquire();
  /// Frees a device returned by acquire().
  void release(const std::string& device);

  [[nodiscard]] bool has_free() const { return m_busy_count < m_capacity; }
  [[nodiscard]] size_t busy() const { return m_busy_count; }
  [[nodiscard]] const std::vector<std::string>& devices() const { return m_devices; }

private:
  std::vector<std::string> m_devices;
  std::vector<bool> m_busy;  // parallel to m_devices
  size_t m_busy_count = 0;
  size_t m_capacity = 0;     // children at once: 1 when exclusive, else one per device
};

}  // namespace benchmatrix
