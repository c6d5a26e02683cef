// The table a sweep prints at its end: one row per record it wrote, with the per-iteration time's
// median and its bootstrap 95% interval over the repeats that count (output/record_figures.hpp;
// repeat 0 is warm-up, as in the HTML report), the record's noise verdict ("—" for records without
// one), and, when any record has them, its paired speedup and its GPU-busy fraction
// (--profile-cupti); or the error, so `make run` answers at a glance. Records of several suites
// (--suite-name=a,b) add a first column, the suite. Notes under the table give
// the noise reasons and say how the figures were made.
#pragma once

#include <string>
#include <vector>

namespace benchmatrix {

/// Rows for the given results.jsonl lines; lines that do not parse are shown as such.
[[nodiscard]] std::string summary_table(const std::vector<std::string>& record_lines);

} // namespace benchmatrix
