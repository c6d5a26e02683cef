#include "numerics/ulp_distance.hpp"

#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

namespace benchmatrix {
namespace {

// Monotonic integer of a sign-magnitude bit pattern of `bits` width.
std::int64_t ordered(std::uint32_t pattern, unsigned bits) {
  const std::uint32_t sign = 1u << (bits - 1);
  const auto magnitude = static_cast<std::int64_t>(pattern & (sign - 1));
  return (pattern & sign) ? -magnitude : magnitude;
}

std::uint64_t distance(std::uint32_t a, std::uint32_t b, unsigned bits) {
  const std::int64_t d = ordered(a, bits) - ordered(b, bits);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

bool bfloat16_is_nan(std::uint16_t bits) {
  return (bits & 0x7f80) == 0x7f80 && (bits & 0x007f) != 0;
}

} // namespace

std::optional<std::uint64_t> ulp_distance_float32(float a, float b) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb)
    return na && nb ? std::optional<std::uint64_t>(0) : std::nullopt;
  return distance(std::bit_cast<std::uint32_t>(a), std::bit_cast<std::uint32_t>(b), 32);
}

std::optional<std::uint64_t> ulp_distance_bfloat16(std::uint16_t a, std::uint16_t b) {
  const bool na = bfloat16_is_nan(a), nb = bfloat16_is_nan(b);
  if (na || nb)
    return na && nb ? std::optional<std::uint64_t>(0) : std::nullopt;
  return distance(a, b, 16);
}

std::optional<std::uint16_t> bfloat16_bits_of_widened(float widened) {
  const auto bits = std::bit_cast<std::uint32_t>(widened);
  if ((bits & 0xffffu) != 0)
    return std::nullopt;
  return static_cast<std::uint16_t>(bits >> 16);
}

ulp_statistics ulp_distance_statistics(const float* a, const float* b, std::size_t n,
                                       ulp_unit unit) {
  ulp_statistics s;
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::optional<std::uint64_t> d;
    if (unit == ulp_unit::float32) {
      d = ulp_distance_float32(a[i], b[i]);
    } else {
      const auto x = bfloat16_bits_of_widened(a[i]), y = bfloat16_bits_of_widened(b[i]);
      if (!x || !y)
        throw std::invalid_argument("element " + std::to_string(i) +
                                    " is not a bfloat16 value widened to float32");
      d = ulp_distance_bfloat16(*x, *y);
    }
    if (!d) {
      ++s.nan_mismatches;
      continue;
    }
    ++s.count;
    sum += static_cast<double>(*d);
    if (*d > s.max)
      s.max = *d;
  }
  s.mean = s.count ? sum / static_cast<double>(s.count) : 0.0;
  return s;
}

} // namespace benchmatrix
