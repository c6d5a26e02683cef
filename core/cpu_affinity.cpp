#include "core/cpu_affinity.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace benchmatrix {

std::vector<int> cpu_affinity() {
  // CPU_ALLOC sizes the set for hosts with more CPUs than the fixed cpu_set_t's 1024.
  constexpr int max_cpus = 8192;
  cpu_set_t* set = CPU_ALLOC(max_cpus);
  if (!set) return {};
  const size_t size = CPU_ALLOC_SIZE(max_cpus);
  CPU_ZERO_S(size, set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, size, set) == 0)
    for (int cpu = 0; cpu < max_cpus; ++cpu)
      if (CPU_ISSET_S(cpu, size, set)) cpus.push_back(cpu);
  CPU_FREE(set);
  return cpus;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> parse_cpu_list(const std::string& text) {
  const auto invalid = [&text](const std::string& why) {
    return std::invalid_argument("CPU list '" + text + "': " + why +
                                 " (expected cpulist form such as 0-3,8)");
  };
  const auto number = [&](const std::string& item) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      throw invalid("'" + item + "' is not a CPU number");
    return std::stoi(item);
  };
  std::vector<int> cpus;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const size_t dash = item.find('-');
    const int first = number(item.substr(0, dash));
    const int last = dash == std::string::npos ? first : number(item.substr(dash + 1));
    if (last < first) throw invalid("the range " + item + " runs backwards");
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    start = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

void set_cpu_affinity(const std::vector<int>& cpus) {
  const int max_cpu = cpus.empty() ? 0 : *std::max_element(cpus.begin(), cpus.end());
  cpu_set_t* set = CPU_ALLOC(max_cpu + 1);
  if (!set) throw std::runtime_error("cannot allocate a CPU set");
  const size_t size = CPU_ALLOC_SIZE(max_cpu + 1);
  CPU_ZERO_S(size, set);
  for (const int cpu : cpus) CPU_SET_S(cpu, size, set);
  const int status = sched_setaffinity(0, size, set);
  const int error = errno;
  CPU_FREE(set);
  if (status != 0)
    throw std::runtime_error("cannot run on CPUs " + cpu_list_text(cpus) + ": " +
                             std::strerror(error));
}

std::string cpu_affinity_text() {
  const auto cpus = cpu_affinity();
  return cpus.empty() ? "unknown" : cpu_list_text(cpus);
}

std::vector<std::vector<int>> cpu_shares(const std::vector<int>& cpus, size_t jobs) {
  jobs = std::min(jobs, cpus.size());
  std::vector<std::vector<int>> shares;
  size_t next = 0;
  for (size_t i = 0; i < jobs; ++i) {
    const size_t size = cpus.size() / jobs + (i < cpus.size() % jobs ? 1 : 0);
    shares.emplace_back(cpus.begin() + static_cast<std::ptrdiff_t>(next),
                        cpus.begin() + static_cast<std::ptrdiff_t>(next + size));
    next += size;
  }
  return shares;
}

}  // namespace benchmatrix
