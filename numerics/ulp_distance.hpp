// Bit-pattern ULP distance for float32 and bfloat16.
//
// Definition: map each value's bits to an integer that is monotonic in the value — non-negative
// numbers keep their magnitude bits, negative numbers become the negated magnitude bits — and take
// the absolute difference. So adjacent representable values are 1 apart, +0 and -0 are the same
// point (0), the distance across zero is the sum of both sides' steps, and +inf is 1 step above the
// largest finite value. Any two NaNs are 0 apart; a NaN against a non-NaN has no distance (nullopt)
// and is counted separately, never folded into the statistics.
//
// This is tt-metal's `calculate_detailed_ulp_stats` (bit-pattern distance on the int16 view,
// sign-aware; reference/kernel_evals.md §4.6), not its `ulp()`/`comp_ulp` ratio |a-b| /
// ulp(golden), which is fractional, depends on which side is the golden and explodes near zero. The
// bfloat16 distance is counted in bfloat16 steps; a bfloat16 value stored widened to float32 (as
// our .npy files hold it) is narrowed back exactly by taking its upper 16 bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace benchmatrix {

[[nodiscard]] std::optional<std::uint64_t> ulp_distance_float32(float a, float b);
/// a and b are bfloat16 bit patterns.
[[nodiscard]] std::optional<std::uint64_t> ulp_distance_bfloat16(std::uint16_t a, std::uint16_t b);

/// The bfloat16 bits of a float32 holding a bfloat16 value exactly (its upper 16 bits);
/// nullopt when the lower 16 bits are not zero (the value is not a bfloat16).
[[nodiscard]] std::optional<std::uint16_t> bfloat16_bits_of_widened(float widened);

enum class ulp_unit { float32, bfloat16 };

struct ulp_statistics {
  std::size_t count = 0;          // elements with a distance
  std::size_t nan_mismatches = 0; // NaN on one side only (not in count, mean or max)
  double mean = 0;                // 0 when count is 0
  std::uint64_t max = 0;
};

/// Element-wise distances of two float32 arrays of n elements, in `unit` steps. For bfloat16 both
/// arrays must hold widened bfloat16 values; throws std::invalid_argument at the first that is not.
[[nodiscard]] ulp_statistics ulp_distance_statistics(const float* a, const float* b, std::size_t n,
                                                     ulp_unit unit);

} // namespace benchmatrix
