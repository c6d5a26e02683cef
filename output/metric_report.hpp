// The metric report of PyTorch/XLA's result_analyzer.py (shared/reference/xla_runner.md §9): one row
// per results.jsonl record with min/median/max (and, past repeat 0, mean/std) of every timing
// metric, as CSV (plus a database CSV it appends to) or JSONL (BigQuery rows).
//
// Differences from the original, on purpose: metrics that are not lists of numbers (the verifier's
// details, dynamo_counters, inductor_ops) are left out instead of crashing the report; a record's
// measured compile time (compile_time_s, taken outside the repeats) is its dynamo_compile_time;
// without one the estimate is the first repeat's total_time minus the median (the original took
// max - median, wrong when a later repeat is an outlier); a database CSV is widened when rows bring
// new columns (the original appended them under the wrong header); JSONL's "accelerator"
// dimension is the accelerator, not (as the original's typo) the accelerator model; rows carry the
// verification code; the report's own metric_report.jsonl is not read back as input.
#pragma once

#include "core/python_json.hpp"
#include "core/results_record.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace benchmatrix {

/// One CSV cell: empty (None/NaN), bool, integer, float or text.
using report_cell = std::variant<std::monostate, bool, int64_t, double, std::string>;

/// A row's columns in order.
using report_row = std::vector<std::pair<std::string, report_cell>>;

struct metric_report_options {
  bool hide_errors = false;      // leave error_message empty
  double fallback_timestamp = 0;  // for records without a timestamp (--timestamp, else now)
};

/// The CSV row of one record (seed columns first, then the summaries in the order they arise).
[[nodiscard]] report_row metric_row(const results_record& record, const metric_report_options& options);

/// The CSV text of the rows: a header (when `with_header`) that is the union of every row's
/// columns in first-appearance order, then one line per row. Cells as pandas.to_csv writes them:
/// floats in Python repr, None/NaN empty, True/False, fields with a comma, quote or newline quoted.
[[nodiscard]] std::string metric_csv(const std::vector<report_row>& rows, bool with_header);

/// The header columns `metric_csv` would write for these rows.
[[nodiscard]] std::vector<std::string> metric_columns(const std::vector<report_row>& rows);

/// Rows rendered for an existing CSV whose header is `columns`: cells in that order, empty where a
/// row lacks the column. Throws std::runtime_error naming a column a row has that the header lacks.
[[nodiscard]] std::string metric_csv_for_header(const std::vector<report_row>& rows,
                                                const std::vector<std::string>& columns);

/// What appending `rows` to a database CSV (its whole text `existing`, empty when new) makes of it.
/// Rows whose columns the header has are appended as they are (`rewrite` false: the caller may
/// append `text` to the file). Rows with new columns (an inductor sweep's compile_time_s after an
/// eager-only one, XLA's xla_* metrics) widen the header: the new columns go at its end, older
/// rows get empty cells there, and `text` is the whole new file (`rewrite` true). Throws
/// std::runtime_error when `existing` is not a CSV (a quoted field left open).
struct database_update {
  std::string text;
  bool rewrite = false;
};
[[nodiscard]] database_update append_to_database(const std::string& existing,
                                                 const std::vector<report_row>& rows);

/// The JSONL line of one record: {"metrics": {...}, "dimensions": {...}[, "error_message"]}.
[[nodiscard]] std::string metric_jsonl_line(const results_record& record,
                                            const metric_report_options& options);

}  // namespace benchmatrix
