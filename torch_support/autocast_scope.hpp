// torch.autocast for LibTorch: autocast on one device type, in one dtype (float16 unless told), for a
// scope's lifetime.
#pragma once

#include <ATen/autocast_mode.h>

namespace benchmatrix {

class autocast_scope {
public:
  autocast_scope(c10::DeviceType device, bool enabled, at::ScalarType dtype = at::kHalf)
      : m_device(device), m_enabled(enabled) {
    if (!m_enabled) return;
    m_previous = at::autocast::is_autocast_enabled(m_device);
    m_previous_dtype = at::autocast::get_autocast_dtype(m_device);
    at::autocast::set_autocast_enabled(m_device, true);
    at::autocast::set_autocast_dtype(m_device, dtype);
    at::autocast::increment_nesting();
  }
  ~autocast_scope() {
    if (!m_enabled) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(m_device, m_previous);
    at::autocast::set_autocast_dtype(m_device, m_previous_dtype);
  }
  autocast_scope(const autocast_scope&) = delete;  // restores the autocast state exactly once
  autocast_scope& operator=(const autocast_scope&) = delete;

private:
  c10::DeviceType m_device;
  bool m_enabled;
  bool m_previous = false;
  at::ScalarType m_previous_dtype = at::kHalf;
};

}  // namespace benchmatrix
