#include "output/verification_codes.hpp"

#include <array>
#include <string_view>

namespace benchmatrix {

verification_outcome outcome_of_code(std::string_view code) {
  if (code == "PASS") return verification_outcome::passed;
  static constexpr std::array<std::string_view, 6> failing = {
      "FAIL", "EAGER_FAILED", "EXCEPTION_RAISED", "NONDETERMINISTIC_EAGER_RUN",
      "VERIFICATION_FAILED", "VERIFIER_FAILED"};
  for (const auto failing_code : failing)
    if (code == failing_code) return verification_outcome::failed;
  return verification_outcome::not_verified;
}

}  // namespace benchmatrix
