// What a record's verification_code says about its output, for every tool that reads records: the
// codes of today's verifier (verifier/verification_code.hpp) and the older names a results file may
// still hold (shared/reference/xla_runner.md §5.4: SKIP_VERIFICATION, VERIFICATION_FAILED,
// CANNOT_PROCEED_WITH_VERIFICATION, NO_OUTPUT_PROVIDED before PyTorch/XLA #7724; VERIFIER_FAILED,
// VERIFIER_SKIPPED_UNEXPECTEDLY until #7777). One table, so the HTML report and compare_runs agree.
#pragma once

#include <string_view>

namespace benchmatrix {

enum class verification_outcome {
  passed,        // PASS
  failed,        // FAIL, EAGER_FAILED, EXCEPTION_RAISED, NONDETERMINISTIC_EAGER_RUN, VERIFICATION_FAILED,
                 // VERIFIER_FAILED
  not_verified,  // nothing was compared: VERIFIER_SKIPPED, VERIFIER_DIDNT_RUN, SKIP_VERIFICATION,
                 // VERIFIER_SKIPPED_UNEXPECTEDLY, CANNOT_PROCEED_WITH_VERIFICATION,
                 // NO_OUTPUT_PROVIDED, no code at all ("") and any code this table does not know
};

[[nodiscard]] verification_outcome outcome_of_code(std::string_view code);

}  // namespace benchmatrix
