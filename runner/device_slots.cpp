#include "runner/device_slots.hpp"

#include "core/argparse.hpp"

#include <algorithm>
#include <stdexcept>

namespace benchmatrix {

std::vector<std::string> parse_device_list(const std::string& value, size_t gpu_count) {
  const std::string where = "argument --devices: ";
  if (value == "all") {
    if (gpu_count == 0)
      throw usage_error(where + "'all' needs GPUs, and nvidia-smi lists none on this host; give "
                                "indices (e.g. --devices 0,1) to run children concurrently without GPUs");
    std::vector<std::string> all;
    for (size_t i = 0; i < gpu_count; ++i) all.push_back(std::to_string(i));
    return all;
  }
  std::vector<std::string> devices;
  size_t begin = 0;
  while (begin <= value.size()) {
    const size_t comma = std::min(value.find(',', begin), value.size());
    const std::string item = value.substr(begin, comma - begin);
    begin = comma + 1;
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      throw usage_error(where + "expected 'all' or comma-separated GPU indices like 0,1, got '" +
                        value + "' (bad item '" + item + "')");
    const std::string index = std::to_string(std::stoull(item));  // "01" is GPU 1
    if (gpu_count > 0 && std::stoull(index) >= gpu_count)
      throw usage_error(where + "GPU " + index + " does not exist: nvidia-smi lists " +
                        std::to_string(gpu_count) + " (0.." + std::to_string(gpu_count - 1) + ")");
    if (std::find(devices.begin(), devices.end(), index) != devices.end())
      throw usage_error(where + "GPU " + index + " is listed twice in '" + value + "'");
    devices.push_back(index);
  }
  return devices;
}

device_slots::device_slots(std::vector<std::string> devices, bool exclusive)
    : m_devices(std::move(devices)), m_busy(m_devices.size(), false),
      m_capacity(exclusive ? std::min<size_t>(1, m_devices.size()) : m_devices.size()) {
  if (m_devices.empty()) throw std::invalid_argument("device_slots: no device");
}

std::optional<std::string> device_slots::acquire() {
  if (m_busy_count >= m_capacity) return std::nullopt;
  for (size_t i = 0; i < m_devices.size(); ++i)
    if (!m_busy[i]) {
      m_busy[i] = true;
      ++m_busy_count;
      return m_devices[i];
    }
  return std::nullopt;
}

void device_slots::release(const std::string& device) {
  for (size_t i = 0; i < m_devices.size(); ++i)
    if (m_devices[i] == device && m_busy[i]) {
      m_busy[i] = false;
      --m_busy_count;
      return;
    }
  throw std::logic_error("device_slots: releasing device " + device + ", which is not taken");
}

}  // namespace benchmatrix
