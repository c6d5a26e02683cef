// cpulist text of a CPU set (records' and run_context.json's run_environment.cpu_affinity).
#include "core/cpu_affinity.hpp"

#include <doctest/doctest.h>

#include <sched.h>

using namespace benchmatrix;

TEST_CASE("cpu_list_text joins runs of consecutive CPUs as the kernel's cpulist does") {
  CHECK(cpu_list_text({}) == "");
  CHECK(cpu_list_text({0}) == "0");
  CHECK(cpu_list_text({0, 1, 2, 3, 8}) == "0-3,8");
  CHECK(cpu_list_text({1, 3, 5, 6}) == "1,3,5-6");
}

TEST_CASE("cpu_affinity is this process's sched_getaffinity set") {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  const auto cpus = cpu_affinity();
  CHECK(static_cast<int>(cpus.size()) == CPU_COUNT(&set));
  for (const int cpu : cpus) CHECK(CPU_ISSET(cpu, &set));
}
