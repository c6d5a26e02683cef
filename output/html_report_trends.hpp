// The HTML report's trends across nights (html_report --history=DB [--last=N]), read from the
// regression gate's SQLite history (output/night_history): a table of the nights shown, one line
// chart per model (a series per config: test/backend/batch/accelerator; x: the night's position,
// 1 = the oldest shown; y: the per-iteration median in ms of the night's counted repeats with its
// bootstrap 95% interval as the error bar) and a table of the flagged nights.
//
// A night is flagged for a config when the gate's history rule (output/night_verdict judge_config
// against the up to gate_options::history_nights nights before it, the default options) calls it a
// regression (SLOWER, BROKEN, ACCURACY_DRIFT): what `regression_gate check --db DB NIGHT
// --no-confirm` says on its first pass, before any confirmation run. Flagged points are drawn with
// a red ring; a night whose config did not run (error, SKIP) or has no timings leaves a gap.
//
// Torch-free; render_trends_section is pure.
#pragma once

#include "output/html_report.hpp"
#include "output/night_history.hpp"
#include "output/night_verdict.hpp"

#include <string>
#include <vector>

namespace benchmatrix {

/// The trends <section id="trends">. `nights`: oldest first, each with its configs; the last
/// `shown` of them are plotted (all when `shown` is 0 or more than there are), the earlier ones
/// only serve as the first shown nights' history. `source`: what the nights were read from (the
/// database's path).
[[nodiscard]] html_section render_trends_section(const std::vector<loaded_night>& nights,
                                                 size_t shown, const std::string& source,
                                                 const gate_options& options = {});

/// The nights of `history` the trends need: the last `shown` (all when 0) and up to
/// options.history_nights before them, oldest first, with their configs.
[[nodiscard]] std::vector<loaded_night>
load_trend_nights(const night_history& history, size_t shown, const gate_options& options = {});

} // namespace benchmatrix
