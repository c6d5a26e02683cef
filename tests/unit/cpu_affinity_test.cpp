// cpulist text of a CPU set (records' and run_context.json's run_environment.cpu_affinity).
#include "core/cpu_affinity.hpp"

#include <doctest/doctest.h>

#include <sched.h>

#include <stdexcept>
#include <vector>

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

TEST_CASE("parse_cpu_list reads what cpu_list_text writes and refuses anything else") {
  CHECK(parse_cpu_list("0-3,8") == std::vector<int>{0, 1, 2, 3, 8});
  CHECK(parse_cpu_list("5") == std::vector<int>{5});
  CHECK(parse_cpu_list("3,1-2,2") == std::vector<int>{1, 2, 3});
  for (const auto* bad : {"", "a", "1,,2", "3-1", "-1", "1-", "0x2"})
    CHECK_THROWS_WITH_AS(parse_cpu_list(bad),
                         doctest::Contains("expected cpulist form such as 0-3,8"),
                         std::invalid_argument);
}

TEST_CASE("set_cpu_affinity narrows this thread's CPUs and says why it cannot") {
  const auto before = cpu_affinity();
  REQUIRE_FALSE(before.empty());
  set_cpu_affinity({before.front()});
  CHECK(cpu_affinity() == std::vector<int>{before.front()});
  set_cpu_affinity(before);  // as it was, for the other tests
  CHECK(cpu_affinity() == before);
  CHECK_THROWS_WITH_AS(set_cpu_affinity({4095}), doctest::Contains("cannot run on CPUs 4095"),
                       std::runtime_error);
}

TEST_CASE("cpu_shares splits CPUs into contiguous shares, the first ones one larger") {
  CHECK(cpu_shares({0, 1, 2, 3, 4, 5, 6, 7}, 4) ==
        std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(cpu_shares({0, 1, 2, 8, 9}, 2) == std::vector<std::vector<int>>{{0, 1, 2}, {8, 9}});
  CHECK(cpu_shares({0, 1}, 4) == std::vector<std::vector<int>>{{0}, {1}});  // at most one each
  CHECK(cpu_shares({0, 1}, 0).empty());
  CHECK(cpu_shares({}, 2).empty());
}
