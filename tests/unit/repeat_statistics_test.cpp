// The one rule for which repeats count: repeat 0 (compilation, warm-up) is left out unless it is
// all there is; non-finite values never count.
#include "core/repeat_statistics.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace benchmatrix;

TEST_CASE("repeat 0 is warm-up and does not count") {
  const auto stats = summarize_repeats({9.0, 1.0, 3.0, 2.0, 4.0});
  REQUIRE(stats);
  CHECK(stats->count == 4);
  CHECK(stats->median == 2.5);  // numpy.median of [1, 3, 2, 4]
  CHECK(stats->min == 1.0);
  CHECK(stats->max == 4.0);
}

TEST_CASE("a single-repeat record keeps its repeat; an empty one has no statistics") {
  const auto single = summarize_repeats({7.0});
  REQUIRE(single);
  CHECK(single->count == 1);
  CHECK(single->median == 7.0);
  CHECK_FALSE(summarize_repeats({}).has_value());
  CHECK(first_counted_repeat(0) == 0);
  CHECK(first_counted_repeat(1) == 0);
  CHECK(first_counted_repeat(2) == 1);
  // More warm-up than repeats: the last repeat is all that counts.
  CHECK(counted_repeats({5.0, 4.0, 3.0}, 3) == std::vector<double>{3.0});
}

TEST_CASE("non-finite repeats never count") {
  CHECK(counted_repeats({1.0, NAN, 2.0, INFINITY}) == std::vector<double>{2.0});
  CHECK_FALSE(summarize_repeats({1.0, NAN}).has_value());
}
