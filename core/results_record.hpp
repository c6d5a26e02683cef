// A results.jsonl line as one typed value (shared/reference/xla_runner.md §5.2), with the one reader
// and the one writer of it. Metrics and top-level keys after verification_code (placement, ...) stay
// JSON in file order, so reading a line and writing it back gives the same bytes.
#pragma once

#include "core/noise_verdict.hpp"
#include "core/paired_speedups.hpp"
#include "core/python_json.hpp"
#include "core/record.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace benchmatrix {

/// One record. Move-only: metrics and extras own their JSON.
class results_record {
public:
  record_identity identity;       // model, experiment (with accelerator_model, batch_size),
                                  // repeat, iterations_per_run, timestamp
  json_document metrics;          // object: {"total_time": [...], ...} | {"error": str} | {}
  std::string verification_code;  // PASS, FAIL, VERIFIER_SKIPPED, ...
  json_document extras;           // object: the top-level keys after verification_code, in order
                                  // (parse_lenient: every key it does not know, in file order)
  std::vector<std::string> absent;  // parse_lenient: the keys the line lacks, or holds null for
                                    // where null is no value ("timestamp", "experiment.xla", ...;
                                    // see parse_lenient); a strict parse leaves it empty

  results_record();

  /// Parses one line. Throws std::runtime_error naming `where` (e.g. "results.jsonl:7"), the key
  /// and what was expected: the §5.2 keys model, experiment (its ten keys in order, then
  /// "precision" and "inductor_mode" where not at their defaults), repeat,
  /// iterations_per_run, metrics, timestamp, verification_code, in this order, then any others
  /// (machine_state, noise, ...); a "noise" among them must be {"verdict", "reasons"} (noise()).
  [[nodiscard]] static results_record parse(std::string_view line, const std::string& where);

  /// Parses one line as the report tools read it: records of every runner version, the older
  /// Python runners' included (experiment.experiment_name, no torch_xla2, no timestamp or
  /// verification_code, outputs_file). Keys in any order; unknown keys of model and experiment are
  /// ignored, unknown top-level keys go to `extras`. Only model.model_name (a string),
  /// experiment.test (a string) and the two objects holding them are required. A key that is
  /// missing, or null where null is no value, is named in `absent` and gets its default:
  ///   model.suite_name, experiment.accelerator, experiment.accelerator_model,
  ///   verification_code: ""; experiment.keep_model_data_on_cuda,
  ///   experiment.enable_functionalization: false; experiment.xla, xla_flags, dynamo, torch_xla2,
  ///   batch_size: null (a null value is a value here: not absent); experiment.precision "auto",
  ///   experiment.inductor_mode "default" (not noted absent); repeat: 10 (the runner's
  ///   default); iterations_per_run: 1; timestamp: 0; metrics: {}.
  /// A key holding the wrong type throws as parse() does, naming `where` and the key.
  /// experiment.batch_size may be an integral float (8.0), timestamp an integer. to_line() of a
  /// record read this way writes the §5.2 shape, defaults filled in.
  [[nodiscard]] static results_record parse_lenient(std::string_view line,
                                                    const std::string& where);

  /// False when parse_lenient found `key` ("timestamp", "experiment.xla", ...) in `absent`.
  [[nodiscard]] bool has(std::string_view key) const;

  /// The line (no newline), exactly as record_line() writes it, extras last.
  [[nodiscard]] std::string to_line() const;

  /// metrics.error as text (a non-string error as its JSON); nullopt when there is none.
  [[nodiscard]] std::optional<std::string> error() const;
  /// metrics.error starting with "SKIP": nothing ran.
  [[nodiscard]] bool is_skip() const;
  /// metrics.error that is not a SKIP: a crash, a timeout, an exception.
  [[nodiscard]] bool is_failed() const;

  /// metrics.<name> when it is a list: one value per repeat, NaN for an entry that is not a number
  /// (null, a NaN token's string). nullopt when absent or not a list.
  [[nodiscard]] std::optional<std::vector<double>> per_repeat(const char* name) const;
  /// Seconds per iteration of each repeat: metrics.per_iter_time, or (records without it)
  /// metrics.total_time divided by iterations_per_run. Empty when the record has neither.
  [[nodiscard]] std::vector<double> per_iter_seconds() const;
  /// metrics.<name> measured once per record (compile_time_s, accuracy, ...; see
  /// once_per_record_list): its repeat-0 entry, or the number itself (records of benchmatrix
  /// versions that wrote it as a scalar). nullopt when absent or not a number.
  [[nodiscard]] std::optional<double> once_per_record(const char* name) const;
  /// The verifier's details: the top-level "verification", or metrics.verification (records of
  /// benchmatrix versions that kept it there); nullptr when absent.
  [[nodiscard]] const json_value* verification() const;
  /// metrics.<name> (e.g. "total_time", "error"); nullptr when absent.
  [[nodiscard]] const json_value* metric(const char* name) const;
  /// A top-level key after verification_code (e.g. "placement"); nullptr when absent.
  [[nodiscard]] const json_value* extra(const char* name) const;
  /// The top-level "noise" (core/noise_verdict: verdict and reasons); nullopt for records without
  /// it (written before issue 24, errors, SKIPs). parse and parse_lenient check its shape.
  [[nodiscard]] std::optional<noise_verdict> noise() const;
  /// The top-level "paired" of a --paired-baseline record (core/paired_speedups.hpp); nullopt
  /// when absent (an unpaired record). parse() and parse_lenient() reject a line whose "paired"
  /// does not have that shape, so for a record they returned this does not throw.
  [[nodiscard]] std::optional<paired_speedups> paired() const;
};

/// A number measured once per record (compile_time_s, compile_helper_s, accuracy,
/// accuracy_max_abs_error, accuracy_max_rel_error) as the per-repeat list every key of metrics is
/// (the original's result_analyzer.py reads each as np.asarray(values, dtype=float) and
/// values[1:]): `value` in repeat 0, 0.0 in the `repeat - 1` after it, as xla_CompileTime_time_s
/// holds the compilation in repeat 0. At least one entry.
[[nodiscard]] json_value once_per_record_list(double value, int repeat, json_allocator& a);

/// Whether metrics.<name> is one of once_per_record_list's numbers (the report tools show its
/// repeat-0 value, not a spread over repeats).
[[nodiscard]] bool is_once_per_record_metric(std::string_view name);

/// A metrics.error text that marks a SKIP (it starts with "SKIP"): nothing ran.
[[nodiscard]] bool is_skip_error(std::string_view error);

struct numbered_record {
  size_t line_number = 0;  // 1-based
  std::string text;        // the line as it is in the file
  results_record record;
};

/// How read_records reads each line.
enum class record_reading {
  strict,   // results_record::parse: the §5.2 shape this runner writes (resume, the sweep)
  lenient,  // results_record::parse_lenient: any runner's records (the report tools)
};

/// Every record of a results file (missing file: none), in file order. Lines that are not JSON
/// objects, or not records, go to `on_unusable(line_number, message)` and are skipped (lines that
/// are not JSON objects first, as read_results reports them while reading); a record's message
/// starts with "line N: ".
[[nodiscard]] std::vector<numbered_record>
read_records(const std::filesystem::path& path,
             const std::function<void(size_t, const std::string&)>& on_unusable,
             record_reading reading = record_reading::strict);

/// The report tools' read: any runner's records (lenient); each unusable line goes to `warn` as
/// "<path>:<N>: skipped: <why>".
[[nodiscard]] std::vector<numbered_record>
read_records_for_report(const std::filesystem::path& path,
                        const std::function<void(const std::string&)>& warn);

}  // namespace benchmatrix
