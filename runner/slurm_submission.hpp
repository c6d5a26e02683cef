// experiment_runner --slurm: the sweep as a Slurm job array — one array task per model partition
// that still has configs without a record, running this same command into its own results file —
// plus a job depending on the array (afterany: it runs even when tasks fail or are cancelled) that
// merges the tasks' results (runner/slurm_merge.hpp) and writes the HTML report.
// Layout: runner/slurm_plan.hpp.
#pragma once

#include "core/argparse.hpp"
#include "runner/sweep.hpp"

namespace benchmatrix {

/// Submits (or with --dry-run prints) the jobs; with --slurm-wait waits for the merge and prints the
/// summary table. Returns the exit status. Throws std::runtime_error when sbatch is missing or
/// refuses a job (its message included), usage_error for a conflicting output directory.
int run_slurm_submission(const sweep_inputs& inputs);

}  // namespace benchmatrix
