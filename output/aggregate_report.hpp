// The reports of PyTorch/XLA's aggregate.py (shared/reference/xla_runner.md §10) over results.jsonl
// files: speedups of each backend over a baseline backend, per sweep timestamp (`speedup`: geomean
// over models), for the latest sweep (`latest`: sorted per-model speedups; `latest_grouped`: a row
// per model plus GEOMEAN) and as p95/p50/p5 over models (`histogram`).
//
// Differences from the original, on purpose:
// - any accelerator: --accelerator matches a record by the original's names (v100, a6000, a100),
//   by its experiment.accelerator (cpu, cuda, tpu), or by whole words of its accelerator_model
//   (case-insensitive: h200 and "nvidia h200" both match "NVIDIA H200"); the original exits on
//   anything but its three GPUs;
// - our backends: a record without xla is named after its dynamo value (cudagraphs, torchscript),
//   eager when dynamo is null;
// - a line that is not JSON, a record missing a required field or holding an unusable value
//   (total_time with NaN/Infinity or non-numbers, xla=XRT) is reported on stderr and skipped; the
//   original exits (or crashes) on the first such line;
// - records with a null total_time (older files) are skipped like those without one;
// - the number of leading samples dropped is a flag (--skip-samples, default 3 as the original);
// - latest_grouped's GEOMEAN row is empty for a backend without data at the latest timestamp (the
//   original raises KeyError); CSV fields holding a comma or quote are quoted.
//
// Added, not in the original: `latest_intervals`, the latest timestamp's speedup of each
// non-baseline backend per model and batch size as a median with its bootstrap 95% interval
// (output/record_figures.hpp, the statistic html_report and compare_runs show): the record's own
// paired speedup when it has one against the baseline backend (kind "paired"), else
// bootstrap_ratio_of_medians of the baseline's and the backend's per_iter_time repeats of that
// timestamp past repeat 0 (kind "unpaired"; --skip-samples and --metric are the original reports'
// and do not apply); its verdict is faster/slower only when the interval excludes 1. The GEOMEAN
// row is the geomean of the per-row medians with no interval (a bootstrap over so few models' ratios
// would be a fake), its verdict cell counting the rows that are faster, slower and within noise.
//
// Added too: `memory_compression`, the latest timestamp's compression ratio of each non-baseline
// backend per model and batch size, as PyTorch's compiler dashboard shows it: the baseline's peak
// memory ÷ the backend's (output/record_figures.hpp: device peak allocated, host peak RSS on the
// CPU; medians of the counted repeats of each record's memory pass), across the two records (a
// paired child does not measure its baseline's memory: the two steps share the device, so each
// one's peak would include the other's resident memory). Rows below 0.9 are flagged ("below 0.9");
// the GEOMEAN row is the geomean over the models shown (run it per suite for the suite's figure),
// its flag cell counting the rows below 0.9. With --backends eager,... the ratio is the
// dashboard's.
#pragma once

#include "output/record_figures.hpp"
#include "output/speedup_statistics.hpp"
#include "output/svg_chart.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace benchmatrix {

/// What to aggregate (the flags of aggregate.py).
struct aggregate_options {
  std::string accelerator = "v100";  // see accelerator_matches
  std::vector<std::string> backends = {"inductor", "openxla+dynamo"};  // the first is the baseline
  bool baseline_latest = false;       // --baseline latest: only the latest timestamp's baseline
  std::vector<std::string> filters;   // regexes, case-insensitive search; empty: every model
  std::vector<std::string> excludes;  // regexes; empty: none
  std::string test = "inference";     // inference (records' test "eval") or training ("train")
  bool compile_metric = false;        // --metric compile instead of exec
  size_t skip_samples = 3;            // leading total_time samples dropped by the exec metric
  // Only records of this precision and Inductor mode (core/precision_axes.hpp; records without the
  // keys ran at the defaults), so that every speedup compares like with like.
  std::string precision = "auto";
  std::string inductor_mode = "default";
};

/// The backends a report may name, with their titles (Eager, Inductor, XLA+Dynamo, ...): the
/// backend registry's, in its order (backends/backend_registry.hpp).
[[nodiscard]] const std::vector<std::pair<std::string, std::string>>& known_backends();
[[nodiscard]] std::string backend_title(const std::string& backend);
/// The names of known_backends(), in order (the choices of the tools' --backends/--backend).
[[nodiscard]] std::vector<std::string> known_backend_names();

/// Whether a record's accelerator matches --accelerator (see the file comment).
[[nodiscard]] bool accelerator_matches(const std::string& wanted, const std::string& accelerator,
                                       const std::string& accelerator_model);

/// Datapoints per batch size of one model, in first-appearance order (a later line replaces the
/// value in place, as a Python dict does). Batch sizes are keyed by their Python str ("8", "None").
using batch_datapoints = std::vector<std::pair<std::string, datapoint>>;
/// Models in first-appearance order.
using model_datapoints = std::vector<std::pair<std::string, batch_datapoints>>;

/// Speedups of one backend at one timestamp: one per model (geomean over its batch sizes), plus
/// their geomean and percentiles.
struct backend_speedups {
  std::vector<std::pair<std::string, datapoint>> per_model;  // model order of the input
  datapoint geomean;
  double p5 = 0, p50 = 0, p95 = 0;
};

/// What the latest_intervals report needs of one record.
struct record_timing {
  std::vector<double> per_iter_s;        // metrics.per_iter_time (or total_time / iterations)
  std::optional<paired_speedup> paired;  // the record's "paired" key
  std::optional<peak_memory_figure> peak_memory;  // the memory pass's peak (memory_compression)
};

/// Everything one sweep timestamp holds.
struct timestamp_results {
  std::map<std::string, model_datapoints> measured;       // by backend
  std::map<std::string, backend_speedups> speedups;       // by backend; absent: no speedup
  /// backend → (model, batch size) → the last record's timings (for latest_intervals)
  std::map<std::string, std::map<std::pair<std::string, std::string>, record_timing>> timings;
};

/// results[timestamp] in ascending timestamp order.
using aggregated_results = std::map<double, timestamp_results>;

/// Reads the files in order; `warn` gets "file:line: skipped: why" for lines it cannot use. The
/// accelerator models of all records go to `accelerators_seen`, and their precision and Inductor
/// mode ("--precision bfloat16 --inductor-mode default") to `axes_seen`, when given (for "no
/// results" hints). Throws std::runtime_error for a file that does not exist or cannot be read.
[[nodiscard]] aggregated_results
load_results(const std::vector<std::filesystem::path>& files, const aggregate_options& options,
             const std::function<void(const std::string&)>& warn,
             std::set<std::string>* accelerators_seen = nullptr,
             std::set<std::string>* axes_seen = nullptr);

/// Computes every timestamp's speedups over the baseline (first backend; oldest or latest).
/// Throws std::runtime_error when --baseline latest finds no baseline data at the latest timestamp.
void compute_speedups(aggregated_results& results, const aggregate_options& options);

/// One table cell: empty (missing value), an integer, a float or text.
using table_cell = std::variant<std::monostate, long long, double, std::string>;

/// A report as a table plus the chart of it.
struct report_table {
  std::vector<std::string> headers;            // one line each (csv, markdown, html)
  std::vector<std::string> multiline_headers;  // with '\n' (the tab format, as the original's)
  std::vector<std::vector<table_cell>> rows;
  std::vector<double> row_timestamps;  // per row of the speedup and histogram reports
  std::string title;                   // the chart's title ('\n' between lines)
};

enum class report_kind {
  speedup, latest, latest_grouped, histogram, latest_intervals, memory_compression
};

/// The report's table; nullopt (after a warning) when there is no data to report, as the original
/// prints nothing then.
[[nodiscard]] std::optional<report_table>
make_report(const aggregated_results& results, const aggregate_options& options, report_kind kind,
            const std::string& extra_title);

/// The chart of a report (same data as the table).
struct chart_size {
  double width_in = 9.0;    // --fig-width, inches
  double height_in = 6.75;  // --fig-height, inches
};
[[nodiscard]] std::string report_svg(const report_table& table, const aggregate_options& options,
                                     report_kind kind, const chart_size& size);

/// Table renderings. csv: the original's (header prefixed "# ", floats as Python prints them,
/// missing values empty); tab: a box-drawn grid like tabulate's fancy_grid with 2-decimal floats;
/// markdown: a GitHub pipe table with 2-decimal floats; html: a whole page with the chart inline.
[[nodiscard]] std::string table_csv(const report_table& table);
[[nodiscard]] std::string table_tab(const report_table& table);
[[nodiscard]] std::string table_markdown(const report_table& table);
[[nodiscard]] std::string report_html(const report_table& table, const std::string& svg);

/// str(datetime.utcfromtimestamp(t)): "2023-11-14 22:13:20.500000" ("…:20" without microseconds).
[[nodiscard]] std::string python_utc_datetime(double timestamp);

}  // namespace benchmatrix
