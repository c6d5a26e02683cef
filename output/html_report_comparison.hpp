// The HTML report's comparison of tonight's night with a baseline night (html_report
// --compare-to=DIR, or --compare-to=latest with --history=DB): one row per config of either night,
// with both nights' per-iteration medians, tonight's time ratio with its 95% interval, the
// regression gate's verdict, the verification codes, the accuracy figures and, above the table,
// what differs between the two nights' run_context.json (output/run_context_diff).
//
// The verdict is the gate's own (output/night_verdict judge_config, single-night rule, the default
// gate_options): the row says what `regression_gate check --baseline BASELINE TONIGHT --no-confirm`
// says of the config, never a second decision rule. The ratio is tonight's time over the
// baseline's (> 1: tonight is slower) with core/median_interval's bootstrap interval: where both
// records hold paired speedups against the same baseline backend (the record's "paired" key), the
// ratio of the baseline night's median paired speedup to tonight's, from the two lists of per-pair
// speedups (bootstrap_ratio_of_medians); otherwise the ratio of the two records' counted
// per-iteration medians (repeat 0 left out, core/repeat_statistics). A ratio is coloured only when
// its interval excludes 1; a row only when the verdict is a regression (SLOWER, BROKEN,
// ACCURACY_DRIFT: red) or an improvement (FASTER, FIXED: green).
//
// Torch-free; compare_nights and render_comparison_section are pure.
#pragma once

#include "core/median_interval.hpp"
#include "output/html_report.hpp"
#include "output/night_history.hpp"
#include "output/night_verdict.hpp"

#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

/// One accuracy figure of a config in both nights (absent where the record does not hold it).
struct accuracy_change {
  std::string name; // "max_rel_error", "rmse_vs_fp64", "cosine_similarity"
  std::optional<double> baseline, tonight;
};

/// How tonight's time ratio was measured.
enum class ratio_kind {
  paired,   // baseline night's median paired speedup / tonight's (same paired baseline backend)
  unpaired, // tonight's per-iteration median / the baseline night's
};

/// One config of the comparison.
struct night_comparison_row {
  std::string config; // config_text(): suite/model/test/backend/bs<N>/<accelerator>:<model>
  std::string model, test, backend, batch_size;
  std::optional<night_config> baseline, tonight;          // absent: not in that night
  std::optional<median_interval> baseline_ms, tonight_ms; // per-iteration median (ms), interval
  std::optional<median_interval> ratio; // tonight / baseline as time (> 1: slower)
  ratio_kind kind = ratio_kind::unpaired;
  config_verdict verdict; // judge_config(tonight, {baseline}, options, single_baseline=true)
  std::vector<accuracy_change> accuracy; // the figures either night holds
};

/// Every config of tonight and of the baseline night, by model (case-insensitive), test, backend,
/// then config text.
[[nodiscard]] std::vector<night_comparison_row> compare_nights(const loaded_night& baseline,
                                                               const loaded_night& tonight,
                                                               const gate_options& options = {});

/// The comparison <section id="comparison">: a heading naming both nights, the gate command the
/// verdicts match, the verdict counts, the run-context differences (or why they are unknown) and
/// the table.
[[nodiscard]] html_section render_comparison_section(const std::vector<night_comparison_row>& rows,
                                                     const loaded_night& baseline,
                                                     const loaded_night& tonight);

} // namespace benchmatrix
