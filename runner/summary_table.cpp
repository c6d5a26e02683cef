#include "runner/summary_table.hpp"

#include "backends/backend_name.hpp"
#include "core/repeat_statistics.hpp"
#include "core/results_record.hpp"
#include "output/record_figures.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace benchmatrix {
namespace {

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds * 1e3);
  return text;
}

/// Columns a cell takes: its code points (the dashes "—" and "–" are one column, three bytes).
size_t display_width(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string fixed(double value, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

/// One record's row before the optional columns are chosen.
struct summary_row {
  std::string suite;                 // "" for an unreadable record
  std::vector<std::string> identity; // model, test, accelerator, backend, batch
  std::string median = "-", interval = "-", paired = "", noise = "—", gpu_busy = "", status;
  std::vector<std::string> notes; // lines under the table
};

summary_row row_of(const std::string& line) {
  summary_row row;
  try {
    const auto record = results_record::parse(line, "record");
    const auto& id = record.identity;
    row.suite = id.suite_name;
    // The reports' name of the backend (backends/backend_name.hpp), so the table and they agree.
    const std::string backend =
        display_config_backend(id.experiment);
    row.identity = {id.model_name, id.experiment.test, id.experiment.accelerator, backend,
                    id.batch_size ? std::to_string(*id.batch_size) : "None"};
    const std::string who = id.model_name + " " + backend + " " + id.experiment.test;
    if (const auto noise = noise_of(record)) {
      row.noise = noise->verdict;
      for (const auto& reason : noise->reasons)
        row.notes.push_back("noise (" + who + ", " + noise->verdict + "): " + reason);
    }
    if (const auto error = record.error()) {
      std::string text = error->substr(0, error->find('\n'));
      if (text.size() > 70)
        text = text.substr(0, 67) + "...";
      row.status = text;
      return row;
    }
    row.status = record.verification_code;
    if (const auto time = time_interval(record.per_iter_seconds())) {
      row.median = milliseconds(time->median);
      row.interval = milliseconds(time->low) + "–" + milliseconds(time->high);
    }
    if (const auto paired = paired_of(record))
      row.paired = interval_text(paired->speedup, 2) + " over " + paired->baseline + ", " +
                   speedup_verdict_name(verdict_of(paired->speedup));
    if (const auto busy = gpu_busy_of(record)) {
      row.gpu_busy = fixed(busy->fraction.median, 2);
    }
  } catch (const std::exception& e) {
    row.identity = {"?", "?", "?", "?", "?"};
    row.median = row.interval = "-";
    row.status = std::string("unreadable record: ") + e.what();
  }
  return row;
}

} // namespace

std::string summary_table(const std::vector<std::string>& record_lines) {
  std::vector<summary_row> records;
  for (const auto& line : record_lines)
    records.push_back(row_of(line));
  const bool any_paired = std::any_of(records.begin(), records.end(),
                                      [](const summary_row& r) { return !r.paired.empty(); });
  const bool any_busy = std::any_of(records.begin(), records.end(),
                                    [](const summary_row& r) { return !r.gpu_busy.empty(); });
  // A suite column only when the records come from several suites (--suite-name=a,b).
  std::set<std::string> suites;
  for (const auto& r : records)
    if (!r.suite.empty()) suites.insert(r.suite);
  const bool several_suites = suites.size() > 1;
  std::vector<std::string> header = {
      "model", "test", "accelerator", "backend", "batch", "per-iter median ms", "95% interval ms"};
  if (several_suites)
    header.insert(header.begin(), "suite");
  if (any_paired)
    header.push_back("paired speedup [95%]");
  header.push_back("noise");
  if (any_busy)
    header.push_back("GPU busy");
  header.push_back("status");
  std::vector<std::vector<std::string>> rows = {header};
  std::vector<std::string> notes;
  for (auto& r : records) {
    std::vector<std::string> row = r.identity;
    if (several_suites)
      row.insert(row.begin(), r.suite.empty() ? "?" : r.suite);
    row.insert(row.end(), {r.median, r.interval});
    if (any_paired)
      row.push_back(r.paired.empty() ? "-" : r.paired);
    row.push_back(r.noise);
    if (any_busy)
      row.push_back(r.gpu_busy.empty() ? "-" : r.gpu_busy);
    row.push_back(r.status);
    rows.push_back(std::move(row));
    notes.insert(notes.end(), r.notes.begin(), r.notes.end());
  }
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], display_width(row[i]));
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t i = 0; i < rows[r].size(); ++i) {
      out += rows[r][i];
      if (i + 1 < rows[r].size())
        out += std::string(widths[i] - display_width(rows[r][i]) + 2, ' ');
    }
    out += '\n';
    if (r == 0)
      for (size_t i = 0; i < widths.size(); ++i)
        out += std::string(widths[i], '-') + (i + 1 < widths.size() ? "  " : "\n");
  }
  // The interval of the median (bootstrap, core/median_interval), not the spread of the repeats.
  out += "95% interval: bootstrap interval of the median over the repeats that count (repeat 0 is "
         "warm-up).\n";
  if (any_paired)
    out += "paired speedup: baseline / backend time of one child alternating both, median of the "
           "per-pair ratios with its 95% interval; within noise when the interval holds 1.\n";
  if (any_busy)
    out += "GPU busy: median CUPTI busy time per iteration (its own pass) / median per-iter time of "
           "the timed repeats; the rest of the step is host time.\n";
  for (const auto& note : notes)
    out += note + '\n';
  return out;
}

} // namespace benchmatrix
