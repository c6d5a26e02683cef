// result_analyzer: the metric report of PyTorch/XLA's result_analyzer.py over every results file of
// an output directory (output/metric_report.hpp says what differs from the original, on purpose).
//
//   result_analyzer --output-dirname=output/ [--output-format=csv|jsonl] [--database=FILE]
//                   (--database defaults to <output-dirname>/database.csv: next to the results read,
//                   never into the directory it is run from)
//                   [--timestamp=T] [--hide-errors]
#include "core/directory_tree.hpp"
#include "core/flag_tool.hpp"
#include "core/log.hpp"
#include "core/results_record.hpp"
#include "core/text_file.hpp"
#include "output/metric_report.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

using namespace benchmatrix;

const char* const program = "result_analyzer";

std::vector<flag_spec> specs() {
  using a = flag_action;
  using t = flag_type;
  return {
      {"output-format", 0, a::store, t::text, {"csv", "jsonl"}, false, "csv", "csv: metric_report.csv plus a row per record appended to --database; jsonl: metric_report.jsonl (BigQuery rows)."},
      {"log-level", 0, a::store, t::text, {"info", "warning"}, false, "warning", "Logging threshold."},
      {"experiment-name", 0, a::store, t::text, {}, false, "run_all", "Accepted for compatibility; unused, as in the original."},
      {"output-dirname", 0, a::store, t::text, {}, false, "./output/", "Directory whose *.jsonl results files are read and where the report is written (must exist)."},
      {"database", 0, a::store, t::text, {}, false, "<output-dirname>/database.csv", "CSV the rows are appended to (csv format); its header is written when it is new, and widened (older rows padded with empty cells) when rows bring new columns."},
      {"timestamp", 0, a::store, t::real, {}, false, "now", "Timestamp of records that have none (seconds since the epoch)."},
      {"hide-errors", 0, a::store_true, t::text, {}, false, "", "Leave error messages out of the report."},
  };
}

std::string last_or(const parsed_flags& flags, const std::string& name, const std::string& fallback) {
  const auto v = flags.last(name);
  return v && *v ? **v : fallback;
}

void write_file(const std::filesystem::path& path, const std::string& text, bool append) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

int run(const parsed_flags& flags) {
  set_logger_name(program);
  set_log_level(last_or(flags, "log-level", "warning"));
  const std::filesystem::path dir = last_or(flags, "output-dirname", "./output/");
  if (!std::filesystem::is_directory(dir))
    throw std::runtime_error("--output-dirname " + dir.string() + " is not a directory");
  metric_report_options options;
  options.hide_errors = flags.given("hide-errors");
  options.fallback_timestamp =
      flags.last("timestamp") && *flags.last("timestamp")
          ? std::stod(**flags.last("timestamp"))
          : std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const bool jsonl = last_or(flags, "output-format", "csv") == "jsonl";

  std::vector<report_row> rows;
  std::string lines;
  size_t files = 0;
  for (const auto& name : directory_entries(dir.string())) {
    if (std::filesystem::path(name).extension() != ".jsonl" || name == "metric_report.jsonl") continue;
    ++files;
    const auto path = dir / name;
    const auto records = read_records(
        path,
        [&](size_t number, const std::string& message) {
          log_warning(path.string() + ":" + std::to_string(number) + ": skipped: " + message);
        },
        record_reading::lenient);
    for (const auto& line : records) {
      if (jsonl)
        lines += metric_jsonl_line(line.record, options) + "\n";
      else
        rows.push_back(metric_row(line.record, options));
    }
  }
  if (files == 0) log_warning("no *.jsonl results file in " + dir.string());
  if (jsonl) {
    write_file(dir / "metric_report.jsonl", lines, false);
    return 0;
  }
  // Next to the results it summarises by default (the original's ./output/database.csv is that only
  // when --output-dirname is left at ./output/; anywhere else it wrote into the current directory).
  const std::filesystem::path database = last_or(flags, "database", (dir / "database.csv").string());
  database_update update;  // worked out before anything is written
  try {
    update = append_to_database(read_text_file(database), rows);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("--database " + database.string() + ": " + e.what());
  }
  write_file(dir / "metric_report.csv", metric_csv(rows, true), false);
  if (database.has_parent_path()) std::filesystem::create_directories(database.parent_path());
  if (update.rewrite)
    replace_text_file(database, update.text);
  else
    write_file(database, update.text, true);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* const description =
      "Summarises every *.jsonl results file of --output-dirname: one row per "
      "record with min/median/max\n(and, past repeat 0, mean/std) of each "
      "timing metric, as PyTorch/XLA's result_analyzer.py.";
  return run_flag_tool(program, description, specs(), {argv + 1, argv + argc}, run);
}
