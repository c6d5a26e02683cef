// The table a sweep prints at its end: one row per record it wrote, with per-iteration time
// median/min/max over the repeats that count (core/repeat_statistics.hpp: repeat 0 is warm-up, as
// in the HTML report) or the error, so `make run` answers at a glance.
#pragma once

#include <string>
#include <vector>

namespace benchmatrix {

/// Rows for the given results.jsonl lines; lines that do not parse are shown as such.
[[nodiscard]] std::string summary_table(const std::vector<std::string>& record_lines);

}  // namespace benchmatrix
