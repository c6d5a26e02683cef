#include "core/host_peak_rss.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace benchmatrix {

host_peak_reset reset_host_peak_rss() {
  host_peak_reset result;
  std::ofstream clear_refs("/proc/self/clear_refs");
  if (clear_refs) clear_refs << "5";
  if (clear_refs) clear_refs.flush();
  if (!clear_refs) {
    const int error = errno;
    result.failure = "cannot write /proc/self/clear_refs" +
                     (error ? std::string(": ") + std::strerror(error) : std::string());
    return result;
  }
  result.reset = true;
  return result;
}

std::optional<long long> parse_vm_hwm_bytes(const std::string& status_text) {
  std::istringstream lines(status_text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    long long kibibytes = -1;
    std::string unit;
    if (!(fields >> kibibytes >> unit) || kibibytes < 0 || unit != "kB") return std::nullopt;
    return kibibytes * 1024;  // the kernel's "kB" is KiB
  }
  return std::nullopt;
}

std::optional<long long> host_peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  if (!status) return std::nullopt;
  std::ostringstream text;
  text << status.rdbuf();
  return parse_vm_hwm_bytes(text.str());
}

}  // namespace benchmatrix
