#include "runner/summary_table.hpp"

#include "backends/backend_name.hpp"
#include "core/python_json.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace benchmatrix {
namespace {

std::string string_at(const json_value& object, const char* key) {
  if (!object.IsObject()) return "?";
  const auto it = object.FindMember(key);
  if (it == object.MemberEnd()) return "?";
  if (it->value.IsNull()) return "None";
  if (it->value.IsString()) return it->value.GetString();
  return python_str(it->value);
}

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds * 1e3);
  return text;
}

/// The reports' name of the record's backend (backends/backend_name.hpp), so the terminal table and
/// the reports agree.
std::string backend_name(const json_value& experiment) {
  const auto optional_at = [&](const char* key) -> std::optional<std::string> {
    const auto text = string_at(experiment, key);
    return text == "None" || text == "?" ? std::nullopt : std::optional<std::string>(text);
  };
  return display_backend_name(optional_at("dynamo"), optional_at("xla"), optional_at("torch_xla2"));
}

}  // namespace

std::string summary_table(const std::vector<std::string>& record_lines) {
  std::vector<std::vector<std::string>> rows = {
      {"model", "test", "accelerator", "backend", "batch", "per-iter median ms", "min ms",
       "max ms", "status"}};
  for (const auto& line : record_lines) {
    std::vector<std::string> row;
    try {
      const auto record = parse_json(line, "record");
      const auto& experiment = record["experiment"];
      row = {string_at(record["model"], "model_name"), string_at(experiment, "test"),
             string_at(experiment, "accelerator"), backend_name(experiment),
             string_at(experiment, "batch_size")};
      const auto& metrics = record["metrics"];
      const auto error = metrics.FindMember("error");
      const auto per_iter = metrics.FindMember("per_iter_time");
      if (error != metrics.MemberEnd()) {
        std::string text = error->value.IsString() ? error->value.GetString() : "error";
        text = text.substr(0, text.find('\n'));
        if (text.size() > 70) text = text.substr(0, 67) + "...";
        row.insert(row.end(), {"-", "-", "-", text});
      } else if (per_iter != metrics.MemberEnd() && per_iter->value.IsArray() &&
                 !per_iter->value.Empty()) {
        std::vector<double> values;
        for (const auto& v : per_iter->value.GetArray())
          if (v.IsNumber()) values.push_back(v.GetDouble());
        std::sort(values.begin(), values.end());
        const double median = values.size() % 2
                                  ? values[values.size() / 2]
                                  : (values[values.size() / 2 - 1] + values[values.size() / 2]) / 2;
        row.insert(row.end(), {milliseconds(median), milliseconds(values.front()),
                               milliseconds(values.back()), string_at(record, "verification_code")});
      } else {
        row.insert(row.end(), {"-", "-", "-", string_at(record, "verification_code")});
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
