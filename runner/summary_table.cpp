#include "runner/summary_table.hpp"

#include "backends/backend_name.hpp"
#include "core/repeat_statistics.hpp"
#include "core/results_record.hpp"

#include <algorithm>
#include <cstdio>

namespace benchmatrix {
namespace {

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds * 1e3);
  return text;
}

}  // namespace

std::string summary_table(const std::vector<std::string>& record_lines) {
  std::vector<std::vector<std::string>> rows = {
      {"model", "test", "accelerator", "backend", "batch", "per-iter median ms", "min ms",
       "max ms", "status"}};
  for (const auto& line : record_lines) {
    std::vector<std::string> row;
    try {
      const auto record = results_record::parse(line, "record");
      const auto& id = record.identity;
      // The reports' name of the backend (backends/backend_name.hpp), so the table and they agree.
      row = {id.model_name, id.experiment.test, id.experiment.accelerator,
             display_backend_name(id.experiment.dynamo, id.experiment.xla, id.experiment.torch_xla2),
             id.batch_size ? std::to_string(*id.batch_size) : "None"};
      if (const auto error = record.error()) {
        std::string text = error->substr(0, error->find('\n'));
        if (text.size() > 70) text = text.substr(0, 67) + "...";
        row.insert(row.end(), {"-", "-", "-", text});
      } else if (const auto stats = summarize_repeats(record.per_iter_seconds())) {
        row.insert(row.end(), {milliseconds(stats->median), milliseconds(stats->min),
                               milliseconds(stats->max), record.verification_code});
      } else {
        row.insert(row.end(), {"-", "-", "-", record.verification_code});
      }
    } catch (const std::exception& e) {
      row = {"?", "?", "?", "?", "?", "-", "-", "-", std::string("unreadable record: ") + e.what()};
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t i = 0; i < rows[r].size(); ++i) {
      out += rows[r][i];
      if (i + 1 < rows[r].size()) out += std::string(widths[i] - rows[r][i].size() + 2, ' ');
    }
    out += '\n';
    if (r == 0)
      for (size_t i = 0; i < widths.size(); ++i)
        out += std::string(widths[i], '-') + (i + 1 < widths.size() ? "  " : "\n");
  }
  return out;
}

}  // namespace benchmatrix
