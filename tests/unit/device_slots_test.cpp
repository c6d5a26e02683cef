// --devices: the device list a user writes, and how many children it lets run at once.
#include "core/argparse.hpp"
#include "runner/device_slots.hpp"

#include <doctest/doctest.h>

using namespace benchmatrix;

namespace {
std::string usage_message(const std::string& value, size_t gpus) {
  try {
    (void)parse_device_list(value, gpus);
  } catch (const usage_error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("--devices lists indices or all; bad items are named") {
  CHECK(parse_device_list("0,1", 2) == std::vector<std::string>{"0", "1"});
  CHECK(parse_device_list("3,01", 0) == std::vector<std::string>{"3", "1"});  // no GPU: any index
  CHECK(parse_device_list("all", 4) == std::vector<std::string>{"0", "1", "2", "3"});
  CHECK(usage_message("all", 0).find("nvidia-smi lists none") != std::string::npos);
  CHECK(usage_message("0,,1", 2).find("bad item ''") != std::string::npos);
  CHECK(usage_message("0,gpu1", 2).find("bad item 'gpu1'") != std::string::npos);
  CHECK(usage_message("-1", 2).find("bad item '-1'") != std::string::npos);
  CHECK(usage_message("0,2", 2).find("GPU 2 does not exist: nvidia-smi lists 2 (0..1)") !=
        std::string::npos);
  CHECK(usage_message("1,1", 2).find("GPU 1 is listed twice") != std::string::npos);
}

TEST_CASE("one config per device; --exclusive one on the host") {
  device_slots slots({"0", "1"}, false);
  const auto first = slots.acquire(), second = slots.acquire();
  REQUIRE(first);
  REQUIRE(second);
  CHECK(*first == "0");
  CHECK(*second == "1");
  CHECK_FALSE(slots.acquire());
  slots.release("0");
  CHECK(slots.busy() == 1);
  CHECK(slots.acquire() == std::optional<std::string>("0"));
  CHECK_THROWS_AS(slots.release("7"), std::logic_error);

  device_slots exclusive({"0", "1"}, true);
  CHECK(exclusive.acquire() == std::optional<std::string>("0"));
  CHECK_FALSE(exclusive.acquire());  // the second GPU is free, but the host is taken
  exclusive.release("0");
  CHECK(exclusive.acquire() == std::optional<std::string>("0"));
}
