// The verifier child (--verify; xla_runner.md §6, dynamo_bench.md §1.4): runs after a config's
// timing child, on the same config, and reports a verification code with the figures that explain
// it. The parent merges both into the config's one record.
//
// Procedure, every run from a fresh model (seed 1337, the same inputs), --verify-iterations steps,
// outputs collected on the CPU:
//  1. eager twice: either raising -> EAGER_FAILED; not bitwise equal -> NONDETERMINISTIC_EAGER_RUN;
//  2. eager in float64, the golden reference (if it raises: cosine similarity instead);
//  3. the experiment's backend; same(eager, backend, fp64) -> PASS or FAIL;
//  anything else raising -> EXCEPTION_RAISED; models in accuracy.skip lists -> VERIFIER_SKIPPED.
// All outputs are compared: every element of multi-output models and, for train, the loss, every
// parameter gradient and every updated parameter.
#pragma once

#include "runner/runner_options.hpp"
#include "suites/suite_config.hpp"

namespace benchmatrix {

/// Runs the verification of the config in `options` and reports
/// {"verification_code": ..., "metrics": {"verification": {...}}} on the result channel.
/// Returns the exit status.
int run_verifier_child(const runner_options& options, const suite_config* config);

}  // namespace benchmatrix
