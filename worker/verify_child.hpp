// The verifier child (--verify; xla_runner.md §6, dynamo_bench.md §1.4): runs after a config's
// timing child, on the same config, and reports a verification code with the figures that explain
// it. The parent merges both into the config's one record; a timing child that failed gets no
// verifier (the parent writes VERIFIER_DIDNT_RUN).
//
// Procedure, every run from a fresh model (seed 1337, the same inputs), --verify-iterations steps,
// outputs collected on the CPU:
//  1. eager twice: either raising -> EAGER_FAILED; not bitwise equal, or the comparison raising
//     (different structures) -> NONDETERMINISTIC_EAGER_RUN;
//  2. eager in float64, the golden reference (if it raises: cosine similarity instead, and
//     metrics.verification.fp64_error says why);
//  3. the experiment's backend; same(eager, backend, fp64) -> PASS or FAIL, with the tolerance of
//     verifier/tolerance.hpp (by test, device, precision and the YAML's tolerance lists);
//  anything else raising -> EXCEPTION_RAISED; models in accuracy.skip lists -> VERIFIER_SKIPPED.
// All outputs are compared: every element of multi-output models and, for train, the loss, every
// parameter gradient and every updated parameter. A FAIL names the first failing leaf
// (failed_output, e.g. "output[1]" or "output[2]['fc.weight.grad']") and the figures of the worst
// failing leaf (worst_output, max_abs_error, rmse_vs_fp64, eager_rmse_vs_fp64, cosine_similarity).
// A backend with a compiled package (inductor) names the one it ran (package: the timing child's
// own cache entry) and, for train, how it draws random numbers (random_ops). An openxla train
// step whose XLA program draws random numbers (its own dropout masks, never eager's) runs 1-3
// with its Dropout modules in eval mode, else the whole module (as PyTorch's harness checks
// TorchBench training), where that removes them (model_mode, model_mode_reason:
// verify_child.cpp choose_module_mode).
#pragma once

#include "core/child_job.hpp"
#include "suites/suite_config.hpp"

namespace benchmatrix {

/// Runs the verification of the job's config and reports
/// {"verification_code": ..., "verification": {...}} on its result channel (printed
/// when it has none). Returns the exit status.
int run_verifier_child(const child_job& job, const suite_config* config);

}  // namespace benchmatrix
