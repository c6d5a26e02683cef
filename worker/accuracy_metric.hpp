// --metrics accuracy (issue 8): in the timing child, after the timed repeats, one step of the
// config's backend and one of the --baseline backend (default eager) on separate clones of the same
// example inputs and on the same model instance, compared with verifier/assert_close.hpp. Eval
// only: a train step updates the weights it is compared on, so train records a note instead.
// When the config's backend is the baseline, the baseline step is built afresh and the two runs are
// compared: a run-to-run check, not a cross-backend one (the record's note says so).
#pragma once

#include "backends/backend.hpp"
#include "core/child_job.hpp"
#include "core/experiment_config.hpp"
#include "core/python_json.hpp"

namespace benchmatrix {

/// The experiment the --baseline backend runs as: the config's accelerator and test with
/// dynamo = `dynamo` (nullopt: eager), xla=PJRT for openxla (its only valid pairing) and no XLA
/// otherwise, no torch_xla2.
[[nodiscard]] experiment_config accuracy_baseline_config(const experiment_config& experiment,
                                                         const nullable_string& dynamo);

/// Adds "accuracy" (1/0), "accuracy_max_abs_error" and "accuracy_max_rel_error" to `metrics`, each
/// a per-repeat list with the value in repeat 0 (once_per_record_list: the check runs once, after
/// the repeats), and to `accuracy` (the record's top-level "accuracy" object) "baseline" and as
/// they apply "mismatch", "note" or "error" (the baseline or a step could not run: no accuracy
/// value), for the timing child's `job` (its experiment, --repeat, --baseline, --rtol and --atol).
void add_accuracy_metrics(json_value& metrics, json_value& accuracy, json_allocator& allocator,
                          const child_job& job, model_instance& model, const step_options& step,
                          const step_function& backend_step);

}  // namespace benchmatrix
