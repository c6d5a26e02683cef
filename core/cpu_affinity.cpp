#include "core/cpu_affinity.hpp"

#include <sched.h>

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

std::string cpu_affinity_text() {
  const auto cpus = cpu_affinity();
  return cpus.empty() ? "unknown" : cpu_list_text(cpus);
}

}  // namespace benchmatrix
