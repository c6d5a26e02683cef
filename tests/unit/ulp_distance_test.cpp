// Bit-pattern ULP distances (numerics/ulp_distance.hpp). The expected values were computed with
// numpy 2.4.6 and torch 2.11.0: float32 bits from np.float32(x).view(np.uint32), mapped to
// -(bits & 0x7fffffff) when the sign bit is set, then |difference|; bfloat16 bits from
// torch.tensor([x], dtype=torch.bfloat16).view(torch.int16) (1.0 → 0x3f80, 1.0078125 → 0x3f81,
// 2.0 → 0x4000, -1.0 → 0xbf80, 0.1 → 0x3dcd, 0.2 → 0x3e4d).
#include "numerics/ulp_distance.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <limits>
#include <stdexcept>
#include <vector>

using namespace benchmatrix;

TEST_CASE("float32 bit-pattern distance") {
  const float next = std::nextafter(1.0f, 2.0f); // 1.0000001192092896
  CHECK(ulp_distance_float32(1.0f, next) == 1u);
  CHECK(ulp_distance_float32(next, 1.0f) == 1u);
  CHECK(ulp_distance_float32(1.0f, 2.0f) == 8388608u); // 2^23 steps in [1, 2)
  CHECK(ulp_distance_float32(-0.0f, 0.0f) == 0u);
  const float tiny = std::numeric_limits<float>::denorm_min();
  CHECK(ulp_distance_float32(tiny, -tiny) == 2u);          // across zero
  CHECK(ulp_distance_float32(-1.0f, 1.0f) == 2130706432u); // 2 · 0x3f800000
  CHECK(ulp_distance_float32(0.1f, 0.2f) == 8388608u);     // 1045220557 - 1036831949
  CHECK(ulp_distance_float32(std::numeric_limits<float>::max(),
                             std::numeric_limits<float>::infinity()) == 1u);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(ulp_distance_float32(nan, nan) == 0u);
  CHECK_FALSE(ulp_distance_float32(nan, 1.0f).has_value());
}

TEST_CASE("bfloat16 bit-pattern distance") {
  CHECK(ulp_distance_bfloat16(0x3f80, 0x3f81) == 1u);
  CHECK(ulp_distance_bfloat16(0x3f80, 0x4000) == 128u);
  CHECK(ulp_distance_bfloat16(0xbf80, 0x3f80) == 32512u);
  CHECK(ulp_distance_bfloat16(0x3dcd, 0x3e4d) == 128u);
  CHECK(ulp_distance_bfloat16(0x8000, 0x0000) == 0u);
  CHECK(ulp_distance_bfloat16(0x7fc0, 0x7fc1) == 0u); // two NaNs
  CHECK_FALSE(ulp_distance_bfloat16(0x7fc0, 0x3f80).has_value());
  CHECK(ulp_distance_bfloat16(0x7f7f, 0x7f80) == 1u); // max finite → +inf
}

TEST_CASE("widened bfloat16 is narrowed exactly, or refused") {
  CHECK(bfloat16_bits_of_widened(1.0078125f) == std::uint16_t{0x3f81});
  CHECK(bfloat16_bits_of_widened(-1.0f) == std::uint16_t{0xbf80});
  CHECK_FALSE(bfloat16_bits_of_widened(0.1f).has_value()); // 0x3dcccccd: not a bfloat16
}

TEST_CASE("statistics over arrays") {
  const std::vector<float> a{1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> b = a;
  auto s = ulp_distance_statistics(a.data(), b.data(), a.size(), ulp_unit::float32);
  CHECK(s.count == 4);
  CHECK(s.max == 0);
  CHECK(s.mean == 0.0);
  b[1] = std::nextafter(2.0f, 3.0f);
  s = ulp_distance_statistics(a.data(), b.data(), a.size(), ulp_unit::float32);
  CHECK(s.max == 1);
  CHECK(s.mean == 0.25);
  // In bfloat16 steps: 2.0 → 2.015625 (0x4000 → 0x4001) is one step.
  b[1] = 2.015625f;
  b[3] = std::numeric_limits<float>::quiet_NaN();
  s = ulp_distance_statistics(a.data(), b.data(), a.size(), ulp_unit::bfloat16);
  CHECK(s.max == 1);
  CHECK(s.count == 3);
  CHECK(s.nan_mismatches == 1);
  b[1] = std::nextafter(2.0f, 3.0f); // not a bfloat16
  CHECK_THROWS_AS((void)ulp_distance_statistics(a.data(), b.data(), a.size(), ulp_unit::bfloat16),
                  std::invalid_argument);
}
