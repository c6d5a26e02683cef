// The child: runs one (model, experiment) config — build, precision, timed repeats — and reports
// exactly one record (xla_runner.md §3.6, §4). Works by hand too: a job without a result channel
// (built from --experiment-config/--model-config) appends its record to the results file itself.
#pragma once

#include "backends/backend.hpp"
#include "core/child_job.hpp"
#include "core/python_json.hpp"
#include "suites/suite_config.hpp"

namespace benchmatrix {

/// Writes one result line to the job's result channel (whole, then renamed into place, so the
/// parent never sees half of it). False when the job has none (a child run by hand).
bool report_child_result(const child_job& job, const std::string& line);

/// The compile cache settings of --cache-dir and --cold-start for the job's model.
[[nodiscard]] backend_context make_backend_context(const child_job& job);

/// Adds compile_time_s (seconds) and compile_helper_s (seconds, when a helper compiled) to a
/// record's metrics, each a per-repeat list with the value in repeat 0 (once_per_record_list, as
/// xla_CompileTime_time_s), and cache_hit (bool, cached backends), cache_rebuilt (why a cached
/// entry was replaced), package and random_ops (compile_report's) to `compile` (the record's
/// top-level "compile" object).
void add_compile_metrics(json_value& metrics, json_value& compile, const compile_report& report,
                         int repeat, json_allocator& a);

/// Returns the exit status. A backend that cannot run the config gives a SKIP record. Throws on any failure (the parent turns the exit into an error record).
int run_child(const child_job& job, const suite_config* config);

}  // namespace benchmatrix
