// aggregate: speedup reports over results.jsonl files, as PyTorch/XLA's aggregate.py (see
// output/aggregate_report.hpp for the reports and what differs from the original, on purpose).
//
//   aggregate --accelerator=h200 --backends eager inductor cudagraphs --report=latest_grouped
//             --format=markdown results/*.jsonl
#include "core/flag_tool.hpp"
#include "core/precision_axes.hpp"
#include "output/aggregate_report.hpp"
#include "suites/tiers.hpp"

#include <iostream>

namespace {

using namespace benchmatrix;

const char* const program = "aggregate";

std::vector<flag_spec> specs() {
  using a = flag_action;
  using t = flag_type;
  return {
      {"input_file", 0, a::positional, t::text, {}, false, "", "results.jsonl files, read in order (a later line replaces an earlier one of the same timestamp, backend, model and batch size)."},
      {"accelerator", 0, a::store, t::text, {}, false, "v100", "Accelerator whose records are reported. Matches the original's names (v100, a6000, a100), a record's experiment.accelerator (cpu, cuda, tpu), or whole words of its accelerator_model, case-insensitively: h200 or 'NVIDIA H200' match 'NVIDIA H200'; a100 matches any A100."},
      {"backends", 0, a::extend, t::text, known_backend_names(), false, "inductor openxla+dynamo", "Backends to report; the first is the baseline. A record without xla is named after its dynamo (cudagraphs, torchscript), eager when dynamo is null."},
      {"baseline", 0, a::store, t::text, {"oldest", "latest"}, false, "oldest", "Baseline values of each model and batch size: the oldest timestamp that has them, or only the latest timestamp's (which must have baseline results)."},
      {"exclude", 'x', a::append, t::text, {}, false, "", "Leave out models matching this regex (case-insensitive search)."},
      {"exclude-by-tier", 0, a::append, t::integer, {}, false, "", "Leave out the models of tier 1-3."},
      {"fig-height", 0, a::store, t::real, {}, false, "6.75", "Chart height (inches)."},
      {"fig-width", 0, a::store, t::real, {}, false, "9.0", "Chart width (inches)."},
      {"filter", 'k', a::append, t::text, {}, false, "", "Report only models matching this regex (case-insensitive search)."},
      {"filter-by-tier", 0, a::append, t::integer, {}, false, "", "Report only the models of tier 1-3."},
      {"format", 0, a::store, t::text, {"csv", "tab", "markdown", "svg", "html", "png"}, false, "csv", "csv: the original's CSV (header prefixed '# ', floats rounded to 8 decimals); tab: a box-drawn text table (tabulate fancy_grid-like, 2 decimals); markdown: a GitHub table (2 decimals); svg: the chart; html: one self-contained page with the chart and the table. png is not supported (use svg)."},
      {"precision", 0, a::store, t::text, precision_choices(), false, "auto", "Report the records of this precision only (experiment.precision; records without it ran at auto), so that each speedup compares one precision's backends."},
      {"inductor-mode", 0, a::store, t::text, inductor_mode_choices(), false, "default", "Report the records of this Inductor mode only (experiment.inductor_mode; records without it ran at default)."},
      {"report", 0, a::store, t::text, {"latest", "latest_grouped", "histogram", "speedup", "latest_intervals", "memory_compression"}, false, "speedup", "speedup: geomean speedup per timestamp; latest: each backend's latest per-model speedups, sorted; latest_grouped: the latest timestamp's speedups per model plus GEOMEAN; histogram: p95/p50/p5 of the per-model speedups per timestamp (these four: the original's mean and standard deviation); latest_intervals (not in the original): the latest timestamp's speedup per model and batch size as a median with its bootstrap 95% interval, paired (the record's own, one child alternating both backends) or unpaired (ratio of the two records' median per_iter_time past repeat 0), and faster/slower only when the interval excludes 1; GEOMEAN without an interval; memory_compression (not in the original): the latest timestamp's compression ratio per model and batch size, the baseline's peak memory / the backend's (device peak allocated, host peak RSS on the CPU; the memory pass's median past repeat 0), flagged below 0.9 as PyTorch's dashboard, GEOMEAN over the models shown."},
      {"test", 0, a::store, t::text, {"inference", "training"}, false, "inference", "Records of test eval (inference) or train (training)."},
      {"metric", 0, a::store, t::text, {"exec", "compile"}, false, "exec", "exec: mean total_time past the first --skip-samples samples (seconds; std: sample std); compile: total_time[0] minus the mean of the rest."},
      {"title", 0, a::store, t::text, {}, false, "", "A second title line for charts."},
      {"skip-samples", 0, a::store, t::integer, {}, false, "3", "Leading total_time samples the exec metric drops (compilation and warm-up); a record with no more samples than this is skipped."},
  };
}



void append_tiers(std::vector<std::string>& patterns, const std::vector<std::string>& tiers) {
  for (const auto& tier : tiers)
    if (const auto regex = tier_regex(std::stoll(tier))) patterns.push_back(*regex);
}

int run(const parsed_flags& flags) {
  const std::string format = flags.text_or("format", "csv");
  if (format == "png")
    throw usage_error("argument --format: png is not supported (this program draws no raster "
                      "images); use --format svg (or html, which embeds the svg)");
  aggregate_options options;
  options.accelerator = flags.text_or("accelerator", "v100");
  options.backends = flags.texts("backends");
  if (options.backends.empty()) options.backends = {"inductor", "openxla+dynamo"};
  options.baseline_latest = flags.text_or("baseline", "oldest") == "latest";
  options.filters = flags.texts("filter");
  options.excludes = flags.texts("exclude");
  append_tiers(options.filters, flags.texts("filter-by-tier"));
  append_tiers(options.excludes, flags.texts("exclude-by-tier"));
  options.test = flags.text_or("test", "inference");
  options.precision = flags.text_or("precision", "auto");
  options.inductor_mode = flags.text_or("inductor-mode", "default");
  options.compile_metric = flags.text_or("metric", "exec") == "compile";
  const long long skip = std::stoll(flags.text_or("skip-samples", "3"));
  if (skip < 0) throw usage_error("argument --skip-samples: must be 0 or more, got " + std::to_string(skip));
  options.skip_samples = static_cast<size_t>(skip);
  chart_size size;
  size.width_in = std::stod(flags.text_or("fig-width", "9.0"));
  size.height_in = std::stod(flags.text_or("fig-height", "6.75"));
  if (!(size.width_in > 0) || !(size.height_in > 0))
    throw usage_error("argument --fig-width/--fig-height: must be positive");
  const std::string report = flags.text_or("report", "speedup");
  const report_kind kind = report == "latest"           ? report_kind::latest
                           : report == "latest_grouped" ? report_kind::latest_grouped
                           : report == "histogram"      ? report_kind::histogram
                           : report == "latest_intervals" ? report_kind::latest_intervals
                           : report == "memory_compression" ? report_kind::memory_compression
                                                        : report_kind::speedup;
  std::vector<std::filesystem::path> files;
  for (const auto& f : flags.texts("input_file")) files.emplace_back(f);

  std::set<std::string> accelerators;
  std::set<std::string> axes;  // "--precision P --inductor-mode M" of every record
  auto results = load_results(
      files, options, [](const std::string& message) { std::cerr << program << ": warning: " << message << "\n"; },
      &accelerators, &axes);
  compute_speedups(results, options);
  if (results.empty()) {
    const auto joined = [](const std::set<std::string>& items) {
      std::string out;
      for (const auto& item : items) out += (out.empty() ? "" : "; ") + item;
      return out;
    };
    const std::string wanted_axes =
        "--precision " + options.precision + " --inductor-mode " + options.inductor_mode;
    throw std::runtime_error(
        "no results found for --accelerator " + options.accelerator + ", --test " + options.test +
        ", " + wanted_axes + " and the model filters" +
        (accelerators.empty() ? "" : " (accelerator models in the input: " + joined(accelerators) + ")") +
        (axes.empty() || axes == std::set<std::string>{wanted_axes}
             ? ""
             : " (precisions and modes in the input: " + joined(axes) + ")"));
  }
  const auto table = make_report(results, options, kind, flags.text_or("title", ""));
  if (!table) {
    std::cerr << program << ": warning: cannot find data for accelerator " << options.accelerator << "\n";
    return 0;
  }
  if (format == "csv") std::cout << table_csv(*table);
  else if (format == "tab") std::cout << table_tab(*table);
  else if (format == "markdown") std::cout << table_markdown(*table);
  else if (format == "svg") std::cout << report_svg(*table, options, kind, size);
  else std::cout << report_html(*table, report_svg(*table, options, kind, size));
  std::cout.flush();
  return std::cout ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* const description =
      "Speedup reports over results.jsonl files, as PyTorch/XLA's aggregate.py, "
      "written to stdout.\nSpeedup = baseline time / backend time per model and "
      "batch size (several batch sizes: their geomean),\nwith the error of a "
      "quotient; the baseline is the first --backends entry. Error, SKIP and verify\n"
      "records, and records with too few samples, are skipped; unusable lines are "
      "reported on stderr.";
  return run_flag_tool(program, description, specs(), {argv + 1, argv + argc}, run);
}
