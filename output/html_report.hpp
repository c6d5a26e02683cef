// The HTML report of one results directory: a single self-contained page (inline CSS and inline
// SVG, no scripts, nothing fetched at view time) built from the records of results.jsonl
// (shared/reference/xla_runner.md §5, old variants of §5.4 included) and the optional
// run_context.json that experiment_runner writes at sweep start. The page holds:
//
// - run context: accelerators, suites, models, backends, tests, batch sizes, repeats, iterations per
//   run and the first/last sweep timestamps (UTC) from the records, then every key of
//   run_context.json (command, versions, host, start time) or a note that it is absent/unreadable;
// - geomean speedup of each backend over the baseline backend, per test;
// - verification: per backend and test, the count of each verification_code, the pass rate over
//   the records the verifier ran on (PASS / every code output/verification_codes.hpp does not
//   call not_verified), and error and SKIP records counted
//   apart (a SKIP record is one whose metrics.error starts with "SKIP"; an error record one with
//   another metrics.error, unless its code is the verifier's own EAGER_FAILED or EXCEPTION_RAISED);
// - per test, a table with a row per model (case-insensitive order) and, per backend, the median
//   per-iteration time in ms with its 95% interval, the record's noise verdict and GPU-busy
//   fraction (output/record_figures.hpp), the speedup over the baseline with its interval and kind
//   (paired / unpaired) and the verification code; error and SKIP cells show the first line of the
//   message, the full text as a tooltip; a GEOMEAN row closes it;
// - per test, a grouped bar chart of the speedups (models × non-baseline backends, the speedups'
//   95% intervals as error bars, a reference line at 1.0) and a grid of small box-and-strip charts, one per model, of the
//   per-repeat times of each backend;
// - peak memory and compression ratios against the baseline, when records have them
//   (output/memory_section.hpp).
//
// Statistics. A record's samples are metrics.per_iter_time (or total_time / iterations_per_run when
// it has no per_iter_time), in ms, past the first `skip_repeats` repeats (default 1: repeat 0
// includes compilation and warm-up, as result_analyzer's mean/std skip it); a record with no more
// repeats than that keeps its last one (core/repeat_statistics.hpp, the rule the sweep's summary
// table follows too). Non-finite samples are ignored. A time is the samples' median with its
// bootstrap 95% interval (core/median_interval). Speedup over the baseline: a record with "paired"
// against the page's baseline shows its paired.speedup as stored (kind "paired"); otherwise
// median(baseline) / median(backend) with bootstrap_ratio_of_medians' interval (kind "unpaired").
// A speedup is coloured faster/slower only when its interval excludes 1, else grey "within noise".
// The geomean over models is of the per-model median speedups, with no interval (how many
// per-model speedups are changes is shown instead). When (test, model, backend) has several
// records, the last in
// file order is shown (as a resumed or retried sweep appends them); records without timings or
// error (verify-mode records) only contribute their verification code.
//
// Torch-free; the rendering functions are pure.
#pragma once

#include "core/python_json.hpp"
#include "core/repeat_statistics.hpp"
#include "core/results_record.hpp"
#include "output/record_figures.hpp"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace benchmatrix {

struct html_report_options {
  std::string title = "benchmatrix report";
  std::string baseline = "eager";  // backend name as aggregate names them
  size_t skip_repeats = default_warm_up_repeats;  // leading repeats left out of the statistics
  std::string source = "results.jsonl";  // what the page says it was built from
  size_t skipped_lines = 0;              // unusable lines of it (the run context says how many)
};

/// What a record is, for the page.
enum class record_kind {
  timing,  // has per-repeat samples (some may be NaN)
  empty,   // no timings and no error (verify-mode records, old records with total_time null)
  error,   // metrics.error, not a SKIP
  skip,    // metrics.error starting with "SKIP"
};

/// One results.jsonl record, reduced to what the page shows.
struct report_record {
  size_t line_number = 0;
  std::string suite;
  std::string model;
  std::string backend;  // eager, inductor, cudagraphs, torchscript, openxla+dynamo, ...
  std::string test;     // eval, train
  std::string accelerator;
  std::string accelerator_model;
  std::optional<long long> batch_size;
  std::optional<long long> repeat;
  std::optional<long long> iterations_per_run;
  std::optional<double> timestamp;
  std::string verification_code;  // "" when the record has none (old records)
  record_kind kind = record_kind::empty;
  std::string error;                   // metrics.error
  std::vector<double> per_iter_ms;     // one per repeat; NaN for non-finite or null values
  std::optional<paired_speedup> paired;      // the record's "paired" key
  std::optional<noise_figure> noise;         // the record's "noise" key (absent in older records)
  std::optional<gpu_busy_figure> gpu_busy;   // --profile-cupti records (repeat 0 left out)
  std::optional<peak_memory_figure> peak_memory;  // the memory pass's (output/memory_section.hpp)
};

/// What the page shows of one record (read with results_record::parse_lenient: a missing repeat,
/// iterations_per_run or timestamp stays unknown, a missing verification_code is ""). Throws
/// std::runtime_error when "paired" or "noise" is not the record contract's shape
/// (load_report_records skips such a record with a warning).
[[nodiscard]] report_record parse_report_record(const results_record& record, size_t line_number);

/// Every usable record of a results file, in file order (read_records, lenient); lines that are
/// not JSON objects or not usable records (no model.model_name or experiment.test, values of the
/// wrong type) go to `warn` as "file:line: skipped: why". Throws std::runtime_error when the file
/// does not exist or cannot be read.
[[nodiscard]] std::vector<report_record>
load_report_records(const std::filesystem::path& results_file,
                    const std::function<void(const std::string&)>& warn);

/// run_context.json as the page shows it.
struct run_context_info {
  bool present = false;
  std::string problem;  // why it could not be used ("" when fine)
  std::vector<std::pair<std::string, std::string>> entries;  // key, display text, file order
};

/// Reads DIR/run_context.json: absent → present=false; unreadable, not JSON or not an object →
/// present=true with `problem` set. Values: strings as they are, lists of strings joined by spaces
/// (shell-quoted where needed), numbers as Python prints them (a "started" time also as UTC),
/// null as "null", anything else as JSON.
[[nodiscard]] run_context_info read_run_context(const std::filesystem::path& file);
[[nodiscard]] std::vector<std::pair<std::string, std::string>>
run_context_entries(const json_value& object);

/// A section another part of the report renders (the comparison with a baseline night, the
/// trends over a history): its anchor, its navigation title and its whole <section> element.
struct html_section {
  std::string id;
  std::string title;
  std::string html;
};

/// The whole page; `extra_sections` follow the run context (and get navigation links).
[[nodiscard]] std::string render_html_report(const std::vector<report_record>& records,
                                             const run_context_info& context,
                                             const html_report_options& options,
                                             const std::vector<html_section>& extra_sections = {});

/// A page of the given sections alone, with the report's style (html_report --history without a
/// results directory: the trends page).
[[nodiscard]] std::string render_html_page(const std::string& title,
                                           const std::vector<html_section>& sections);

/// Median, min, max and sample std (ddof=1; 0 for one value) of the finite values past the first
/// `skip` (all but the last when there are no more than `skip`); nullopt when none is finite.
struct sample_summary {
  double median = 0, min = 0, max = 0, std = 0;
  size_t count = 0;
};
[[nodiscard]] std::optional<sample_summary> summarize_samples(const std::vector<double>& values,
                                                              size_t skip);
[[nodiscard]] std::vector<double> used_samples(const std::vector<double>& values, size_t skip);

/// A verification code as the page's cells show it: a short label ("skipped", "exception") coloured
/// as PASS, a failure or not verified, the code itself as the tooltip; "none" for "".
[[nodiscard]] std::string verification_code_html(const std::string& code);

/// A time in ms with 4 significant digits and at most 6 decimals ("4.712", "123.5", "0.01234").
[[nodiscard]] std::string format_ms(double ms);

}  // namespace benchmatrix
