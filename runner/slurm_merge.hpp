// experiment_runner --slurm --slurm-merge: the dependent job of a --slurm sweep. It rebuilds
// <output-dirname>/<output-basename> from the array tasks' results files, in plan order: each
// planned config's record, or — for a config whose task ended without reporting it (cancelled by
// scancel, killed at its --time limit, node failure) — an error record naming the task and the tail
// of its log. The file is replaced atomically; the tasks' own files are never changed, so running
// the same --slurm command again submits exactly the configs without a record, and merges again.
#pragma once

#include "runner/sweep.hpp"

namespace benchmatrix {

/// Merges, writes run_context.json, prints the summary table. Returns 0 (missing configs are error
/// records, not a failed merge); throws std::runtime_error when the merged file cannot be written.
int run_slurm_merge(const sweep_inputs& inputs);

}  // namespace benchmatrix
