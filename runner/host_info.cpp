#include "runner/host_info.hpp"

#include <cstdio>
#include <fstream>
#include <memory>

namespace benchmatrix {
namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

std::vector<std::string> query_gpu_names() {
  std::vector<std::string> names;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(
      ::popen("nvidia-smi --query-gpu=gpu_name --format=csv,noheader 2>/dev/null", "r"), ::pclose);
  if (!pipe) return names;
  char line[512];
  while (std::fgets(line, sizeof line, pipe.get())) {
    const auto name = trim(line);
    if (!name.empty()) names.push_back(name);
  }
  if (::pclose(pipe.release()) != 0) names.clear();  // no driver, or nvidia-smi failed
  return names;
}

}  // namespace

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    const auto colon = line.find(':');
    if (colon != std::string::npos && trim(line.substr(0, colon)) == "model name")
      return trim(line.substr(colon + 1));
  }
  return "unknown CPU";
}

const std::vector<std::string>& gpu_names() {
  static const std::vector<std::string> names = query_gpu_names();
  return names;
}

std::string accelerator_model(const std::string& accelerator) {
  if (accelerator == "cpu") return cpu_model_name();
  if (accelerator == "cuda") {
    const auto& names = gpu_names();
    if (names.empty()) return "unavailable";
    if (names.size() == 1) return names.front();
    std::string joined;
    for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
    return "One of " + joined;
  }
  return "unavailable";
}

}  // namespace benchmatrix
