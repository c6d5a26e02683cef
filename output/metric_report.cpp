#include "output/metric_report.hpp"
#include "output/text_cells.hpp"

#include "core/repeat_statistics.hpp"

#include <boost/algorithm/string/classification.hpp>
#include <boost/algorithm/string/split.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// A JSON scalar as a cell (null, bool, integer, float, string); objects and arrays are empty.
report_cell cell_of(const json_value* v) {
  if (!v || v->IsNull()) return std::monostate{};
  if (v->IsBool()) return v->GetBool();
  if (v->IsInt64()) return v->GetInt64();
  if (v->IsNumber()) return v->GetDouble();
  if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  return std::monostate{};
}

/// A text field as a cell; empty when the record lacks it.
report_cell text_cell(const results_record& record, const char* key, const std::string& value) {
  return record.has(key) ? report_cell(value) : report_cell{};
}

report_cell nullable_cell(const nullable_string& value) {
  return value ? report_cell(*value) : report_cell{};
}

/// An integer field as a cell; empty when the record lacks it.
report_cell integer_cell(const results_record& record, const char* key, long long value) {
  return record.has(key) ? report_cell(int64_t{value}) : report_cell{};
}

/// The numbers of a per-repeat metric: a non-empty list of numbers; nullopt for anything else
/// (dicts, strings, scalars, lists holding null or NaN tokens' strings).
std::optional<std::vector<double>> numbers_of(const json_value& v) {
  if (!v.IsArray() || v.Empty()) return std::nullopt;
  std::vector<double> out;
  for (const auto& x : v.GetArray()) {
    if (!x.IsNumber()) return std::nullopt;
    out.push_back(x.GetDouble());
  }
  return out;
}

/// get_calculated_metrics: min/median/max per metric over every repeat (the original's columns),
/// mean/std (population) over the repeats that count (core/repeat_statistics.hpp: past repeat 0,
/// the original's values[1:]), only when repeat 0 is not all there is. A number measured once per
/// record (compile_time_s, accuracy, ...: is_once_per_record_metric) is one column under its own
/// name, its repeat-0 value: from the list this runner writes, or from the scalar that earlier
/// benchmatrix versions wrote (any number, not a list, is such a column).
std::vector<std::pair<std::string, double>> summaries(const json_value& metrics, bool has_xla) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& m : metrics.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    if (m.value.IsNumber()) {  // one figure per config (earlier versions' scalar compile_time_s)
      out.emplace_back(key, m.value.GetDouble());
      continue;
    }
    if (is_once_per_record_metric(key) && m.value.IsArray() && !m.value.Empty() &&
        m.value[0].IsNumber()) {  // [value, 0.0, ...]: the value is repeat 0's
      out.emplace_back(key, m.value[0].GetDouble());
      continue;
    }
    const auto values = numbers_of(m.value);
    if (!values) continue;
    // Every summary is -1 for trace_per_iter_time without XLA (the original's rule), and NaN when
    // a value is NaN (numpy's min/median/max/mean/std all give NaN then).
    std::optional<double> fixed;
    if (key == "trace_per_iter_time" && !has_xla)
      fixed = -1.0;
    else if (std::any_of(values->begin(), values->end(), [](double x) { return std::isnan(x); }))
      fixed = std::nan("");
    const auto [lo, hi] = std::minmax_element(values->begin(), values->end());
    out.emplace_back("min_" + key, fixed.value_or(*lo));
    out.emplace_back("median_" + key, fixed ? *fixed : median_of(*values));
    out.emplace_back("max_" + key, fixed.value_or(*hi));
    if (const size_t first = first_counted_repeat(values->size()); first > 0) {
      const std::vector<double> rest(values->begin() + static_cast<std::ptrdiff_t>(first), values->end());
      double mean = 0;
      for (double x : rest) mean += x;
      mean /= static_cast<double>(rest.size());
      double variance = 0;
      for (double x : rest) variance += (x - mean) * (x - mean);
      variance /= static_cast<double>(rest.size());
      out.emplace_back("mean_" + key, fixed.value_or(mean));
      out.emplace_back("std_" + key, fixed.value_or(std::sqrt(variance)));
    }
  }
  return out;
}

struct analysed_record {
  report_row identity;  // timestamp .. iterations_per_run
  std::optional<std::string> error;
  std::vector<std::pair<std::string, double>> stats;
  double xla_compile_time = -1;
  double dynamo_compile_time = -1;
  bool has_stats = false;
};

analysed_record analyse(const results_record& record, const metric_report_options& o) {
  analysed_record a;
  const auto& id = record.identity;
  const auto& e = id.experiment;
  a.identity = {
      {"timestamp", record.has("timestamp") ? id.timestamp : o.fallback_timestamp},
      {"suite_name", text_cell(record, "model.suite_name", id.suite_name)},
      {"model_name", id.model_name},
      {"accelerator", text_cell(record, "experiment.accelerator", e.accelerator)},
      {"accelerator_model", text_cell(record, "experiment.accelerator_model", id.accelerator_model)},
      {"xla", nullable_cell(e.xla)},
      {"xla_flags", nullable_cell(e.xla_flags)},
      {"dynamo", nullable_cell(e.dynamo)},
      {"torch_xla2", nullable_cell(e.torch_xla2)},
      {"keep_model_data_on_cuda", record.has("experiment.keep_model_data_on_cuda")
                                      ? report_cell(e.keep_model_data_on_cuda)
                                      : report_cell{}},
      {"test", e.test},
      {"batch_size", id.batch_size ? report_cell(int64_t{*id.batch_size}) : report_cell{}},
      {"repeat", integer_cell(record, "repeat", id.repeat)},
      {"iterations_per_run", integer_cell(record, "iterations_per_run", id.iterations_per_run)},
  };
  // benchmatrix's axes, only for records that ran off their defaults (core/precision_axes.hpp), so
  // that a default sweep's report keeps the original's columns and two precisions of one config
  // are told apart.
  if (e.precision != default_precision) a.identity.emplace_back("precision", e.precision);
  if (e.inductor_mode != default_inductor_mode)
    a.identity.emplace_back("inductor_mode", e.inductor_mode);

  const json_value& metrics = record.metrics;
  if (const auto error = record.error()) {
    a.error = *error;
  } else if (!metrics.ObjectEmpty()) {
    const bool has_xla = e.xla.has_value();
    a.stats = summaries(metrics, has_xla);
    a.has_stats = true;
    double compile_time = std::nan("");
    const auto find = [&](const std::string& name) -> std::optional<double> {
      for (const auto& [k, v] : a.stats)
        if (k == name) return v;
      return std::nullopt;
    };
    // The first repeat carries the compilation: its excess over the median estimates it. (The
    // original took max - median, the same number unless a later repeat was an outlier.)
    const json_value* total = record.metric("total_time");
    if (auto mid = find("median_total_time");
        mid && total && total->IsArray() && !total->Empty() && (*total)[0].IsNumber())
      compile_time = (*total)[0].GetDouble() - *mid;
    if (const auto measured = record.once_per_record("compile_time_s"))
      compile_time = *measured;  // measured apart from the repeats
    if (has_xla) a.xla_compile_time = compile_time;
    if (e.dynamo) a.dynamo_compile_time = compile_time;
  }
  return a;
}

std::string csv_field(const report_cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) return "";
  if (const bool* b = std::get_if<bool>(&cell)) return *b ? "True" : "False";
  if (const int64_t* i = std::get_if<int64_t>(&cell)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&cell)) {
    if (std::isnan(*d)) return "";
    if (std::isinf(*d)) return *d > 0 ? "inf" : "-inf";  // pandas' to_csv, not JSON's Infinity
    return python_float_repr(*d);
  }
  return csv_quoted(std::get<std::string>(cell));
}

void json_add(json_value& object, const std::string& key, const report_cell& cell,
              json_allocator& a) {
  json_value v;
  if (const bool* b = std::get_if<bool>(&cell)) v.SetBool(*b);
  else if (const int64_t* i = std::get_if<int64_t>(&cell)) v.SetInt64(*i);
  else if (const double* d = std::get_if<double>(&cell)) v.SetDouble(*d);
  else if (const std::string* s = std::get_if<std::string>(&cell)) v.SetString(s->c_str(), a);
  object.AddMember(json_value(key.c_str(), a), v, a);
}

/// The original's str(value) of an experiment field in JSONL dimensions: "None" for null.
std::string dimension_text(const report_cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) return "None";
  if (const std::string* s = std::get_if<std::string>(&cell)) return *s;
  return csv_field(cell);
}

report_cell column_of(const report_row& row, const std::string& name) {
  for (const auto& [k, v] : row)
    if (k == name) return v;
  return std::monostate{};
}

}  // namespace

report_row metric_row(const results_record& record, const metric_report_options& o) {
  const analysed_record a = analyse(record, o);
  report_row row = a.identity;
  const double nan = std::nan("");
  const auto stat = [&](const std::string& name) -> report_cell {
    if (a.error) return -1.0;
    for (const auto& [k, v] : a.stats)
      if (k == name) return v;
    return nan;
  };
  row.emplace_back("error_message", a.error && !o.hide_errors ? report_cell(*a.error) : report_cell{});
  row.emplace_back("median_total_time", stat("median_total_time"));
  row.emplace_back("median_per_iter_time", stat("median_per_iter_time"));
  row.emplace_back("xla_median_trace_per_iter_time", a.error ? report_cell(-1.0) : report_cell(nan));
  row.emplace_back("xla_compile_time", a.error || a.has_stats ? report_cell(a.xla_compile_time) : report_cell(nan));
  row.emplace_back("dynamo_compile_time",
                   a.error || a.has_stats ? report_cell(a.dynamo_compile_time) : report_cell(nan));
  row.emplace_back("outputs_file", cell_of(record.extra("outputs_file")));
  row.emplace_back("verification_code", text_cell(record, "verification_code", record.verification_code));
  for (const auto& [k, v] : a.stats)
    if (k != "median_total_time" && k != "median_per_iter_time") row.emplace_back(k, v);
  return row;
}

std::vector<std::string> metric_columns(const std::vector<report_row>& rows) {
  std::vector<std::string> columns;
  for (const auto& row : rows)
    for (const auto& [k, v] : row)
      if (std::find(columns.begin(), columns.end(), k) == columns.end()) columns.push_back(k);
  return columns;
}

std::string metric_csv_for_header(const std::vector<report_row>& rows,
                                  const std::vector<std::string>& columns) {
  std::string out;
  for (const auto& row : rows) {
    for (const auto& [k, v] : row)
      if (std::find(columns.begin(), columns.end(), k) == columns.end())
        throw std::runtime_error("column '" + k + "' is not in the existing header");
    for (size_t i = 0; i < columns.size(); ++i)
      out += (i ? "," : "") + csv_field(column_of(row, columns[i]));
    out += '\n';
  }
  return out;
}

namespace {

/// The records of a CSV text, each without its line end; a newline inside a quoted field (an error
/// message) stays in its record. Quotes inside fields are doubled (RFC 4180), so the quote parity
/// tells whether a newline is inside a field.
std::vector<std::string> csv_records(const std::string& text) {
  std::vector<std::string> records;
  std::string current;
  bool quoted = false;
  for (const char c : text) {
    if (c == '"') quoted = !quoted;
    if (c == '\n' && !quoted) {
      if (!current.empty() && current.back() == '\r') current.pop_back();
      records.push_back(std::move(current));
      current.clear();
      continue;
    }
    current += c;
  }
  if (quoted) throw std::runtime_error("not a CSV file: a quoted field is never closed");
  if (!current.empty()) records.push_back(std::move(current));
  return records;
}

/// The fields of a header record (our headers are metric names: no quotes, no commas).
std::vector<std::string> header_fields(const std::string& record) {
  std::vector<std::string> fields;
  boost::split(fields, record, boost::is_any_of(","));
  return fields;
}

}  // namespace

database_update append_to_database(const std::string& existing, const std::vector<report_row>& rows) {
  if (existing.empty()) return {metric_csv(rows, /*with_header=*/true), true};
  const std::vector<std::string> records = csv_records(existing);
  std::vector<std::string> columns = header_fields(records.front());
  const size_t old_width = columns.size();
  for (const std::string& column : metric_columns(rows))
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
  if (columns.size() == old_width) {
    const bool ends_in_newline = existing.back() == '\n';
    return {(ends_in_newline ? "" : "\n") + metric_csv_for_header(rows, columns), false};
  }
  const std::string padding(columns.size() - old_width, ',');
  std::string text;
  for (size_t i = 0; i < columns.size(); ++i) text += (i ? "," : "") + csv_field(columns[i]);
  text += '\n';
  for (size_t r = 1; r < records.size(); ++r) text += records[r] + padding + '\n';
  return {text + metric_csv_for_header(rows, columns), true};
}

std::string metric_csv(const std::vector<report_row>& rows, bool with_header) {
  const auto columns = metric_columns(rows);
  std::string out;
  if (with_header) {
    for (size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + csv_field(columns[i]);
    out += '\n';
  }
  return out + metric_csv_for_header(rows, columns);
}

std::string metric_jsonl_line(const results_record& record, const metric_report_options& o) {
  const analysed_record a = analyse(record, o);
  json_document d(rapidjson::kObjectType);
  auto& alloc = d.GetAllocator();
  json_value metrics(rapidjson::kObjectType);
  const auto identity = [&](const std::string& name) { return column_of(a.identity, name); };
  // "Do not use bool" (the original's comment, for BigQuery): integers and floats only.
  json_add(metrics, "timestamp",
           static_cast<int64_t>(std::get<double>(identity("timestamp"))), alloc);
  const report_cell batch = identity("batch_size");
  json_add(metrics, "batch_size",
           std::holds_alternative<std::monostate>(batch) ? report_cell(int64_t{-1}) : batch, alloc);
  json_add(metrics, "repeat", identity("repeat"), alloc);
  json_add(metrics, "iterations_per_run", identity("iterations_per_run"), alloc);
  if (a.error) {
    for (const char* k : {"median_total_time", "median_per_iter_time",
                          "xla_median_trace_per_iter_time", "xla_compile_time",
                          "dynamo_compile_time"})
      json_add(metrics, k, -1.0, alloc);
  } else if (a.has_stats) {
    for (const auto& [k, v] : a.stats) json_add(metrics, k, v, alloc);
    json_add(metrics, "xla_compile_time", a.xla_compile_time, alloc);
    json_add(metrics, "dynamo_compile_time", a.dynamo_compile_time, alloc);
  }
  json_value dimensions(rapidjson::kObjectType);
  for (const char* k : {"suite_name", "model_name", "accelerator", "accelerator_model"})
    json_add(dimensions, k, identity(k), alloc);
  for (const char* k : {"xla", "dynamo", "torch_xla2", "test"})
    json_add(dimensions, k, dimension_text(identity(k)), alloc);
  for (const char* k : {"precision", "inductor_mode"})  // off their defaults only (see analyse)
    if (const report_cell value = identity(k); !std::holds_alternative<std::monostate>(value))
      json_add(dimensions, k, dimension_text(value), alloc);
  json_add(dimensions, "outputs_file", dimension_text(cell_of(record.extra("outputs_file"))), alloc);
  json_add(dimensions, "verification_code",
           dimension_text(text_cell(record, "verification_code", record.verification_code)), alloc);
  json_add(dimensions, "run_status", std::string(a.error ? "failure" : "success"), alloc);
  d.AddMember("metrics", metrics, alloc);
  d.AddMember("dimensions", dimensions, alloc);
  if (a.error && !o.hide_errors) d.AddMember("error_message", json_value(a.error->c_str(), alloc), alloc);
  return to_python_json(d);
}

}  // namespace benchmatrix
