// The HTML report's "Peak memory" section (issue 26): per test, a row per (suite, model) and, per
// backend, the peak memory of its record's memory pass (output/record_figures.hpp peak_memory_of:
// device peak allocated, host peak RSS on the CPU) and, for every backend but the page's baseline,
// the compression ratio baseline peak ÷ backend peak, marked as PyTorch's dashboard marks it below
// 0.9; a GEOMEAN row per suite (and one over all when there are several suites). Empty when no
// record has a memory figure. Torch-free, pure; it uses the page's CSS classes (td.num, td.slower,
// tr.geomean, .note).
#pragma once

#include "output/record_figures.hpp"

#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

/// What the section needs of one record (the page's last record per test, suite, model, backend).
struct memory_cell_input {
  std::string test;
  std::string suite;
  std::string model;
  std::string backend;
  std::optional<peak_memory_figure> peak_memory;
};

/// The <section id="memory">, or "" when no input has a peak memory figure. `backends` in the
/// page's column order; `baseline` the page's baseline backend.
[[nodiscard]] std::string memory_section_html(const std::vector<memory_cell_input>& records,
                                              const std::vector<std::string>& backends,
                                              const std::string& baseline);

}  // namespace benchmatrix
