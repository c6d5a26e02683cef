// Run-to-run comparison of two results.jsonl files (A: the reference, e.g. last night's sweep;
// B: the candidate, tonight's), the check a nightly regression job gates on. Pure functions: load a
// run, compare two runs, render the comparison; output/compare_runs.cpp is the command around them.
//
// Configurations are matched by (suite_name, model_name, test, backend, batch_size,
// accelerator_model); the backend is named as aggregate names it (backends/backend_name.hpp). A later
// line for the same configuration replaces an earlier one, as a resumed sweep's would.
//
// Each side of a configuration is one of:
// - timed: metrics.<metric> (per_iter_time or total_time, seconds) holds numbers; the first
//   skip_samples of them are dropped (repeat 0 carries compilation and first-call effects; a record
//   with no more keeps its last: core/repeat_statistics.hpp); the median of the rest is the side's
//   time;
// - untimed: no such metric, or null (--verify records, whose metrics are {}; older files' null
//   total_time, reference §5.4); only the verification code counts;
// - error / skip: metrics.error (a skip when it starts with "SKIP");
// - unusable: the metric is not a list of numbers, is empty, or holds NaN/Infinity among the
//   samples used, or its median is not positive; the record is reported, never crashes the tool.
//
// Verdicts (the first rule that applies, in this order):
//   NEW_IN_B / MISSING_IN_B  the configuration is in one run only;
//   UNUSABLE                 either side is unusable (note: which side, and why);
//   BOTH_FAILED              both sides error/skip (note: B's first error line);
//   BROKEN                   B is error/skip and A is not (note: B's first error line), or A's
//                            verification passed and B's failed (PASS -> FAIL, ...);
//   FIXED                    the reverse of BROKEN (note: A's first error line);
//   BOTH_FAILED / SAME       both untimed: BOTH_FAILED when both verifications failed, else SAME
//                            (note "no timings");
//   UNUSABLE                 one side timed, the other untimed: nothing to compare;
//   SLOWER                   both timed, and the timing rule below says slower;
//   MORE_MEMORY              both timed, not SLOWER, and B's peak memory rose beyond A's
//                            (output/record_figures.hpp compare_peak_memory: the median more than
//                            memory_threshold above and every counted repeat above A's): a faster
//                            or equal B that needs more memory is flagged, as PyTorch's dashboard
//                            flags a compression ratio below 0.9, instead of looking like a pure
//                            win;
//   SLOWER / FASTER / SAME   both timed: ratio = median_B / median_A (> 1: B is slower), with its
//                            bootstrap interval at confidence 1 - alpha
//                            (core/median_interval: bootstrap_ratio_of_medians of the two sides'
//                            samples). With at least min_samples samples on both sides, the
//                            difference is real when (decide_by interval, the default) the interval
//                            excludes 1 (note "within noise" otherwise), or (decide_by
//                            mann_whitney, the rule before the intervals) a two-sided Mann-Whitney
//                            U test (output/mann_whitney.hpp) gives p < alpha (note "not
//                            significant" otherwise): SLOWER when real and ratio > 1 + threshold,
//                            FASTER when real and ratio < 1 / (1 + threshold), else SAME. With
//                            fewer samples the threshold alone decides (note "few samples").
// Where both sides carry a paired speedup (the record's "paired" key, against the same baseline
// backend), the note gives both with their intervals and whether the intervals are apart — the
// comparison least exposed to drift between the two runs' machines. A record whose "paired" or
// "noise" key is malformed is UNUSABLE (its side says why).
// Verification codes, as output/verification_codes.hpp classes them: PASS passes; FAIL,
// EAGER_FAILED, EXCEPTION_RAISED, NONDETERMINISTIC_EAGER_RUN and the older VERIFICATION_FAILED and
// VERIFIER_FAILED fail; every other code or none means "not verified" and never changes a verdict.
//
// Where both sides have a peak memory figure (the memory pass's, output/record_figures.hpp), the
// note gives its change ("peak device allocated +25%: 1.00 GiB -> 1.25 GiB") when the rule above
// finds a rise or a fall.
//
// The geometric mean of the ratios of the timed pairs is reported per backend and over all.
#pragma once

#include "core/median_interval.hpp"
#include "core/repeat_statistics.hpp"
#include "output/mann_whitney.hpp"
#include "output/record_figures.hpp"

#include <compare>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace benchmatrix {

/// What tells a real timing difference from noise (compare_runs --decide-by).
enum class decision {
  interval,      // the ratio's bootstrap interval excludes 1 (the reports' one statistic)
  mann_whitney,  // a two-sided Mann-Whitney U test, p < alpha (compare_runs before intervals)
};

/// The tunables of a comparison (compare_runs' flags).
struct comparison_options {
  decision decide_by = decision::interval;
  std::string metric = "per_iter_time";  // metrics key holding per-repeat times (seconds)
  size_t skip_samples = default_warm_up_repeats;  // leading samples dropped (core/repeat_statistics)
  size_t min_samples = 5;                // per side, for the U test; fewer: threshold only
  double threshold = 0.05;               // fraction: SLOWER beyond 1+t, FASTER below 1/(1+t)
  double memory_threshold = 0.10;        // fraction: MORE_MEMORY beyond 1+t (and the spread)
  double alpha = 0.05;                   // significance level: the U test's, or 1 - the
                                         // interval's confidence (0.05: a 95% interval)
  std::vector<std::string> filters;      // model regexes (case-insensitive search); empty: all
  std::vector<std::string> excludes;     // model regexes; empty: none
  std::vector<std::string> backends;     // backend names to keep; empty: all
};

/// What identifies one configuration across runs. Fields are Python's str() of the record's
/// values ("None" for null or missing; batch_size "8" or "None").
struct config_key {
  std::string suite_name;
  std::string model_name;
  std::string test;
  std::string backend;
  std::string batch_size;
  std::string accelerator_model;
  auto operator<=>(const config_key&) const = default;
};

enum class side_state { timed, untimed, error, skip, unusable };

/// One run's record of one configuration.
struct run_side {
  side_state state = side_state::unusable;
  std::vector<double> samples;  // timed: the samples used (seconds)
  double median_s = 0;          // timed: their median (numpy's: mean of the middle two)
  std::optional<std::string> verification_code;  // absent in older records
  std::string verification_message;  // first line of verification.message (a FAIL's why), or ""
  std::string detail;  // error/skip: the error's first line; unusable: why
  std::string where;   // "file:line" of the record
  std::optional<paired_speedup> paired;  // the record's "paired" key
  std::optional<noise_figure> noise;     // the record's "noise" key
  std::optional<peak_memory_figure> peak_memory;  // the memory pass's peak (none: no pass)
};

using run_records = std::map<config_key, run_side>;

/// results.jsonl itself, or <dir>/results.jsonl for a directory. Throws std::runtime_error naming
/// the path when it does not exist or cannot be read.
[[nodiscard]] std::filesystem::path results_file_of(const std::filesystem::path& file_or_dir);

/// Reads one run (read_records, lenient). `warn` gets "file:line: skipped: why" for lines that are
/// not JSON objects, lack model.model_name or experiment.test, or hold a value of the wrong type.
/// Throws std::runtime_error for an unreadable file and for a bad
/// --filter/--exclude regex.
[[nodiscard]] run_records load_run(const std::filesystem::path& file_or_dir,
                                   const comparison_options& options,
                                   const std::function<void(const std::string&)>& warn);

enum class verdict {
  slower, broken, faster, fixed, same, missing_in_b, new_in_b, both_failed, unusable, more_memory
};
[[nodiscard]] const char* verdict_name(verdict v);  // "SLOWER", "MISSING_IN_B", ...
[[nodiscard]] const std::vector<verdict>& all_verdicts();

struct comparison_row {
  config_key key;
  std::optional<run_side> a, b;        // absent: not in that run
  verdict result = verdict::same;
  std::optional<double> ratio;         // both timed: median_B / median_A
  std::optional<median_interval> interval;  // both timed: the ratio's bootstrap interval
  std::optional<mann_whitney_result> test;  // both timed with enough samples
  std::string note;                    // "few samples", B's error, ...
  std::optional<double> memory_ratio;  // both with a peak memory of one kind: peak B / peak A
  memory_change memory = memory_change::none;  // compare_peak_memory(A, B)
};

struct geomean_row {
  std::string backend;  // "all" for the overall row
  double ratio = 1;     // exp(mean(log(ratio))) over the timed pairs
  size_t pairs = 0;
};

struct comparison {
  decision decided_by = decision::interval;
  double confidence = default_confidence;  // of the intervals (1 - alpha)
  std::vector<comparison_row> rows;     // by model (case-insensitive), backend, test, batch, ...
  std::vector<geomean_row> geomeans;    // per backend by name, then "all"; none without pairs
  [[nodiscard]] size_t count(verdict v) const;
};

[[nodiscard]] comparison compare_runs(const run_records& a, const run_records& b,
                                      const comparison_options& options);

/// Whether any row's verdict is in `fail_on` (the nightly gate: compare_runs exits 1).
[[nodiscard]] bool gate_fails(const comparison& c, const std::set<verdict>& fail_on);

/// Renderings (stdout of compare_runs).
/// table: aligned plain text, times in ms with 3 decimals ("error", "SKIP", "unusable" in their
///   place; "-": not in that run), ratio with 3 decimals, then (decide_by interval) the ratio's
///   interval "low–high" with 3 decimals under a header naming its confidence ("95% interval"), or
///   (mann_whitney) p with 3 decimals or as 1.7e-04 below
///   0.001 ("-": a timed pair with too few samples), the verification codes where either side was
///   verified (PASS or a failure), the geomean rows, and a line counting the verdicts; suite and
///   accelerator columns only when the rows hold more than one;
/// markdown: the same as a GitHub table;
/// csv: every field at full precision (one header line; geomean rows with model GEOMEAN); columns
///   u,p_value,method (mann_whitney) or ratio_low,ratio_high,confidence (interval) after ratio;
/// json: one object with the options, the rows (with their samples, the ratio's interval, each
///   side's paired speedup and noise verdict), the geomeans, the verdict counts and whether the
///   gate fails.
[[nodiscard]] std::string comparison_table(const comparison& c);
[[nodiscard]] std::string comparison_markdown(const comparison& c);
[[nodiscard]] std::string comparison_csv(const comparison& c);
[[nodiscard]] std::string comparison_json(const comparison& c, const comparison_options& options,
                                          const std::set<verdict>& fail_on);

}  // namespace benchmatrix
