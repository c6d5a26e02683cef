// html_report: one self-contained HTML page (inline CSS and SVG, no scripts, nothing fetched at
// view time) for a results directory: run context, geomean speedups, verification pass rates,
// per-model tables and charts (output/html_report.hpp says what the page holds and how its
// statistics are computed).
//
//   html_report --output-dirname=results [--output=results/report.html] [--title=TEXT]
//               [--baseline=eager] [--skip-repeats=1]
//               [--compare-to=BASELINE_DIR | --compare-to=latest] [--history=DB [--last=30]]
//
// Reads DIR/results.jsonl (unusable lines: a warning naming file:line, then skipped; a missing file:
// an error, exit 1, nothing written) and DIR/run_context.json when it exists. The page is written to
// a temporary file next to the output, then renamed over it, so a failed run never leaves half a
// report. Prints the path of the report on stdout.
//
// --compare-to adds the comparison of this night with a baseline night (output/
// html_report_comparison.hpp): another output directory, or "latest", the latest night of the
// --history database that started before this one. --history adds the trends across the
// database's last --last nights (output/html_report_trends.hpp); with --history and no
// --output-dirname the page holds the trends alone (default output: trends.html next to DB).
#include "core/flag_tool.hpp"
#include "core/text_file.hpp"
#include "output/aggregate_report.hpp"
#include "output/html_report.hpp"
#include "output/html_report_comparison.hpp"
#include "output/html_report_trends.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace {

using namespace benchmatrix;

const char* const program = "html_report";

std::vector<flag_spec> specs() {
  using a = flag_action;
  using t = flag_type;
  return {
      {"output-dirname", 0, a::store, t::text, {}, false, "./output/", "Results directory: its results.jsonl is reported, with its run_context.json when present."},
      {"output", 0, a::store, t::text, {}, false, "DIR/report.html", "The HTML file to write (replaced atomically)."},
      {"title", 0, a::store, t::text, {}, false, "benchmatrix report: <results directory>", "The page's title."},
      {"baseline", 0, a::store, t::text, {}, false, "eager", "Backend the speedups are computed over (eager, inductor, cudagraphs, torchscript, openxla+dynamo, openxla+lazytensor: a record without xla is named after its dynamo, eager when dynamo is null)."},
      {"skip-repeats", 0, a::store, t::integer, {}, false, "1", "Leading repeats left out of the statistics and charts (repeat 0 includes compilation and warm-up); a record with no more repeats keeps its last one."},
      {"compare-to", 0, a::store, t::text, {}, false, "", "Add a comparison of this night with a baseline night: another output directory (results.jsonl, run_context.json), or 'latest' for the --history database's latest night that started before this one. Per config: both nights' per-iteration medians, tonight/baseline time ratio with its 95% interval (paired speedups where both records have them), the verdict 'regression_gate check --baseline BASELINE TONIGHT --no-confirm' gives, verification codes, accuracy figures; above them the run-context differences."},
      {"history", 0, a::store, t::text, {}, false, "", "The regression gate's history database (SQLite): add trend plots per model across its nights (per config, per-iteration median with its 95% interval, nights the gate flags marked). Without --output-dirname the page holds the trends alone."},
      {"last", 0, a::store, t::integer, {}, false, "30", "With --history: the nights the trend plots show (the latest ones); 0 for all."},
  };
}


const auto warn = [](const std::string& message) {
  std::cerr << program << ": warning: " << message << "\n";
};

/// The --history database, which must exist (html_report reads it, never creates one).
std::unique_ptr<night_history> open_history(const std::string& path) {
  if (path.empty()) return nullptr;
  if (!std::filesystem::is_regular_file(path))
    throw usage_error("argument --history: no history database " + path +
                      " (regression_gate import --db FILE DIR... creates one)");
  return std::make_unique<night_history>(path);
}

/// The trends section of --history's database.
html_section trends_of(const night_history& history, const std::string& path, long long last) {
  return render_trends_section(load_trend_nights(history, static_cast<size_t>(last)),
                               static_cast<size_t>(last), path);
}

/// The baseline night of --compare-to: a directory, or "latest" (the history's latest night that
/// started before tonight, tonight itself left out, as regression_gate check --against-latest).
loaded_night baseline_night(const std::string& compare_to, const night_history* history,
                            const loaded_night& tonight) {
  if (compare_to != "latest") {
    if (!std::filesystem::is_directory(compare_to))
      throw usage_error("argument --compare-to: " + compare_to +
                        " is not a directory (an output directory of experiment_runner, or "
                        "'latest' with --history)");
    try {
      return read_night(compare_to, warn);
    } catch (const std::runtime_error& e) {
      throw usage_error(std::string("argument --compare-to: ") + e.what());
    }
  }
  if (!history) throw usage_error("argument --compare-to=latest needs --history=DB");
  std::optional<night_info> latest;
  for (auto& n : history->nights()) {
    if (n.content_hash == tonight.info.content_hash || n.path == tonight.info.path) continue;
    if (tonight.info.started > 0 && n.started >= tonight.info.started) continue;
    latest = std::move(n);
  }
  if (!latest)
    throw usage_error("argument --compare-to=latest: the history holds no night that started "
                      "before " + tonight.info.path);
  loaded_night night;
  night.configs = history->configs_of(latest->id);
  night.info = std::move(*latest);
  return night;
}

int run(const parsed_flags& flags) {
  const long long last = std::stoll(flags.text_or("last", "30"));
  if (last < 0)
    throw usage_error("argument --last: must be 0 (all nights) or more, got " +
                      std::to_string(last));
  const auto history_path = flags.text_or("history", "");
  const auto compare_to = flags.text_or("compare-to", "");
  const auto history = open_history(history_path);
  if (history && flags.text_or("output-dirname", "").empty()) {
    if (!compare_to.empty())
      throw usage_error("argument --compare-to needs --output-dirname (tonight's directory)");
    // The trends alone.
    const std::filesystem::path output = flags.text_or(
        "output", (std::filesystem::path(history_path).parent_path() / "trends.html").string());
    if (std::filesystem::is_directory(output))
      throw usage_error("--output " + output.string() + " is a directory");
    const auto title = flags.text_or("title", "benchmatrix trends: " +
                                     std::filesystem::path(history_path).filename().string());
    replace_text_file(output, render_html_page(title, {trends_of(*history, history_path, last)}));
    std::cout << program << ": wrote " << output.string() << " (trends of " << history_path
              << ")\n";
    return 0;
  }
  const std::filesystem::path dir = flags.text_or("output-dirname", "./output/");
  if (!std::filesystem::is_directory(dir))
    throw std::runtime_error("--output-dirname " + dir.string() + " is not a directory");
  const std::filesystem::path output = flags.text_or("output", (dir / "report.html").string());
  if (std::filesystem::is_directory(output))
    throw std::runtime_error("--output " + output.string() + " is a directory");
  const long long skip = std::stoll(flags.text_or("skip-repeats", "1"));
  if (skip < 0) throw usage_error("argument --skip-repeats: must be 0 or more, got " + std::to_string(skip));

  html_report_options options;
  options.baseline = flags.text_or("baseline", "eager");
  options.skip_repeats = static_cast<size_t>(skip);
  auto directory_name = std::filesystem::weakly_canonical(dir).filename().string();
  if (directory_name.empty()) directory_name = dir.string();
  options.title = flags.text_or("title", "benchmatrix report: " + directory_name);
  options.source = (dir / "results.jsonl").string();

  const auto records = load_report_records(dir / "results.jsonl", [&](const std::string& message) {
    ++options.skipped_lines;
    std::cerr << program << ": warning: " << message << "\n";
  });
  if (records.empty()) std::cerr << program << ": warning: no usable records in " << options.source << "\n";
  bool baseline_seen = false;
  for (const auto& r : records) baseline_seen = baseline_seen || r.backend == options.baseline;
  if (!records.empty() && !baseline_seen)
    std::cerr << program << ": warning: no " << options.baseline
              << " records (--baseline): the report has no speedups\n";
  const auto context = read_run_context(dir / "run_context.json");
  if (!context.problem.empty())
    std::cerr << program << ": warning: run_context.json skipped: " << context.problem << "\n";

  std::vector<html_section> sections;
  if (!compare_to.empty()) {
    const auto tonight = read_night(dir, [](const std::string&) {});  // warned above
    const auto baseline = baseline_night(compare_to, history.get(), tonight);
    sections.push_back(
        render_comparison_section(compare_nights(baseline, tonight), baseline, tonight));
  }
  if (history) sections.push_back(trends_of(*history, history_path, last));

  replace_text_file(output, render_html_report(records, context, options, sections));
  std::cout << program << ": wrote " << output.string() << " (" << records.size() << " records)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* const description =
      "Writes one self-contained HTML page (inline CSS and SVG, no scripts, no network at view time)\n"
      "for the results.jsonl of --output-dirname: run context (records and run_context.json),\n"
      "geomean speedups, verification counts and pass rates, a table per test with each model's\n"
      "median per-iteration time (min-max), speedup over --baseline and verification code per\n"
      "backend, speedup bar charts with error bars and per-repeat time distributions.\n"
      "Speedup = median(baseline) / median(backend) with its bootstrap 95% interval (a paired\n"
      "record's stored paired speedup where it has one). Unusable lines are reported on stderr\n"
      "and skipped; the page is replaced atomically.\n"
      "--compare-to adds tonight vs a baseline night with the regression gate's verdicts;\n"
      "--history adds trend plots per model across the gate's history of nights.";
  return run_flag_tool(program, description, specs(), {argv + 1, argv + argc}, run);
}
