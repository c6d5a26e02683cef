// html_report: one self-contained HTML page (inline CSS and SVG, no scripts, nothing fetched at
// view time) for a results directory: run context, geomean speedups, verification pass rates,
// per-model tables and charts (output/html_report.hpp says what the page holds and how its
// statistics are computed).
//
//   html_report --output-dirname=results [--output=results/report.html] [--title=TEXT]
//               [--baseline=eager] [--skip-repeats=1]
//
// Reads DIR/results.jsonl (unusable lines: a warning naming file:line, then skipped; a missing file:
// an error, exit 1, nothing written) and DIR/run_context.json when it exists. The page is written to
// a temporary file next to the output, then renamed over it, so a failed run never leaves half a
// report. Prints the path of the report on stdout.
#include "core/flag_tool.hpp"
#include "core/text_file.hpp"
#include "output/aggregate_report.hpp"
#include "output/html_report.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

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
  };
}


int run(const parsed_flags& flags) {
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

  replace_text_file(output, render_html_report(records, context, options));
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
      "Speedup = median(baseline) / median(backend) with the error of a quotient from both samples'\n"
      "std. Unusable lines are reported on stderr and skipped; the page is replaced atomically.";
  return run_flag_tool(program, description, specs(), {argv + 1, argv + argc}, run);
}
