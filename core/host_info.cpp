#include "core/host_info.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

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

namespace {

/// The first "key: value" line of `stream` with this key, its value trimmed; "" when none.
std::string field_of(std::istream& stream, const std::string& key) {
  std::string line;
  while (std::getline(stream, line)) {
    const auto colon = line.find(':');
    if (colon != std::string::npos && trim(line.substr(0, colon)) == key)
      return trim(line.substr(colon + 1));
  }
  return "";
}

/// lscpu's "Model name:" as the original reads it (it names ARM cores from its tables, where
/// /proc/cpuinfo has no model name); "" when lscpu is missing or says nothing.
std::string lscpu_model_name() {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen("LC_ALL=C lscpu 2>/dev/null", "r"), ::pclose);
  if (!pipe) return "";
  std::string text;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe.get())) > 0;) text.append(buffer, n);
  if (::pclose(pipe.release()) != 0) return "";
  std::istringstream lines(text);
  return field_of(lines, "Model name");
}

}  // namespace

std::string cpu_model_name() {
  static const std::string name = [] {
    if (auto from_lscpu = lscpu_model_name(); !from_lscpu.empty()) return from_lscpu;
    std::ifstream cpuinfo("/proc/cpuinfo");  // the same text on x86, where lscpu reads it too
    auto from_cpuinfo = field_of(cpuinfo, "model name");
    return from_cpuinfo.empty() ? std::string("unknown CPU") : from_cpuinfo;
  }();
  return name;
}

const std::vector<std::string>& gpu_names() {
  static const std::vector<std::string> names = query_gpu_names();
  return names;
}

namespace {

/// The GPUs named by a CUDA_VISIBLE_DEVICES list of indices; every GPU for anything else.
std::vector<std::string> visible_gpu_names(const std::string& cuda_visible_devices) {
  const auto& all = gpu_names();
  if (cuda_visible_devices.empty()) return all;
  std::vector<std::string> visible;
  std::stringstream items(cuda_visible_devices);
  std::string item;
  while (std::getline(items, item, ',')) {
    item = trim(item);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) return all;
    const auto index = std::stoull(item);
    if (index >= all.size()) break;  // CUDA ignores the list from the first invalid index on
    visible.push_back(all[index]);
  }
  return visible;
}

}  // namespace

std::string accelerator_model(const std::string& accelerator) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return accelerator_model(accelerator, visible ? visible : "");
}

std::string accelerator_model(const std::string& accelerator,
                              const std::string& cuda_visible_devices) {
  if (accelerator == "cpu") return cpu_model_name();
  if (accelerator == "cuda") {
    const auto names = visible_gpu_names(cuda_visible_devices);
    if (names.empty()) return "unavailable";
    if (names.size() == 1) return names.front();
    std::string joined;
    for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
    return "One of " + joined;
  }
  return "unavailable";
}

}  // namespace benchmatrix
