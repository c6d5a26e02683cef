// compare_runs: run-to-run comparison of two results.jsonl files (or output directories), the check
// a nightly regression job gates on (output/run_comparison.hpp: matching, verdicts, renderings).
//
//   compare_runs last_night/ tonight/ --threshold 0.05 || exit 1
//   compare_runs A.jsonl B.jsonl --format=markdown -k resnet --backend inductor
//
// Exit status: 0 when no row's verdict is in --fail-on (default slower,broken,more_memory); 1 when
// one is (the gate), or when no configuration is in both runs (unless --fail-on none); 2 on bad
// input: a usage error, a missing or unreadable file, a bad regex. Corrupt lines
// are reported on stderr with file:line and skipped.
#include "core/flag_tool.hpp"
#include "output/aggregate_report.hpp"
#include "output/run_comparison.hpp"
#include "output/run_context_diff.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

namespace {

using namespace benchmatrix;

const char* const program = "compare_runs";

std::vector<flag_spec> specs() {
  using a = flag_action;
  using t = flag_type;
  return {
      {"runs", 0, a::positional, t::text, {}, false, "", "Two runs, A (reference) then B (candidate): results.jsonl files or output directories (a directory means its results.jsonl)."},
      {"metric", 0, a::store, t::text, {"per_iter_time", "total_time"}, false, "per_iter_time", "Per-repeat times compared (seconds in the records; shown in ms)."},
      {"skip-samples", 0, a::store, t::integer, {}, false, "1", "Leading samples dropped (repeat 0 carries compilation and first-call effects); a record with no more than this many keeps its last."},
      {"min-samples", 0, a::store, t::integer, {}, false, "5", "Samples each side needs (after --skip-samples) for the interval or the Mann-Whitney U test to decide; with fewer, --threshold alone decides and the row says 'few samples'."},
      {"threshold", 0, a::store, t::real, {}, false, "0.05", "Smallest change that counts, as a fraction: SLOWER needs ratio > 1 + threshold, FASTER ratio < 1 / (1 + threshold)."},
      {"alpha", 0, a::store, t::real, {}, false, "0.05", "Significance level: the ratio's bootstrap interval has confidence 1 - alpha (0.05: 95%); with --decide-by mann-whitney, SLOWER/FASTER need p < alpha."},
      {"decide-by", 0, a::store, t::text, {"interval", "mann-whitney"}, false, "interval", "What tells a real difference from noise (with --min-samples per side): interval: the bootstrap interval of median B / median A excludes 1 (the statistic every report shows); mann-whitney: a two-sided Mann-Whitney U test with p < --alpha (compare_runs' rule before intervals; its table shows p instead of the interval)."},
      {"format", 0, a::store, t::text, {"table", "markdown", "csv", "json"}, false, "table", "table: aligned text; markdown: a GitHub table; csv: every field at full precision; json: one object (rows with samples, U and p, geomeans, counts)."},
      {"filter", 'k', a::append, t::text, {}, false, "", "Compare only models matching this regex (case-insensitive search)."},
      {"exclude", 'x', a::append, t::text, {}, false, "", "Leave out models matching this regex (case-insensitive search)."},
      {"backend", 0, a::append, t::text, known_backend_names(), false, "", "Compare only this backend (named as aggregate names them)."},
      {"memory-threshold", 0, a::store, t::real, {}, false, "0.10", "Fraction: MORE_MEMORY when B's median peak memory (device allocated, or host RSS on the CPU) is above A's by more than this and every counted repeat of B is above every one of A's."},
      {"fail-on", 0, a::store, t::text, {}, false, "slower,broken,more_memory", "Comma-separated verdicts that make the exit status 1: slower, broken, more_memory, faster, fixed, same, missing_in_b, new_in_b, both_failed, unusable; or none."},
  };
}



std::set<verdict> parse_fail_on(const std::string& text) {
  std::set<verdict> out;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item == "none") continue;
    bool known = false;
    for (const verdict v : all_verdicts()) {
      std::string name = verdict_name(v);
      for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (name == item) {
        out.insert(v);
        known = true;
      }
    }
    if (!known)
      throw usage_error("argument --fail-on: unknown verdict '" + item +
                        "' (choose from slower, broken, more_memory, faster, fixed, same, "
                        "missing_in_b, "
                        "new_in_b, both_failed, unusable, none)");
  }
  return out;
}

int run(const parsed_flags& flags) {
  const auto runs = flags.texts("runs");
  if (runs.size() != 2)
    throw usage_error("expected two runs, A and B, got " + std::to_string(runs.size()));
  comparison_options options;
  options.metric = flags.text_or("metric", "per_iter_time");
  const long long skip = std::stoll(flags.text_or("skip-samples", "1"));
  if (skip < 0)
    throw usage_error("argument --skip-samples: must be 0 or more, got " + std::to_string(skip));
  options.skip_samples = static_cast<size_t>(skip);
  const long long min_samples = std::stoll(flags.text_or("min-samples", "5"));
  if (min_samples < 1)
    throw usage_error("argument --min-samples: must be 1 or more, got " +
                      std::to_string(min_samples));
  options.min_samples = static_cast<size_t>(min_samples);
  options.threshold = std::stod(flags.text_or("threshold", "0.05"));
  if (!(options.threshold >= 0) || !std::isfinite(options.threshold))
    throw usage_error("argument --threshold: must be a fraction of 0 or more (0.05 is 5%)");
  options.alpha = std::stod(flags.text_or("alpha", "0.05"));
  if (!(options.alpha > 0 && options.alpha <= 1))
    throw usage_error("argument --alpha: must be in (0, 1]");
  options.decide_by = flags.text_or("decide-by", "interval") == "mann-whitney"
                          ? decision::mann_whitney
                          : decision::interval;
  options.filters = flags.texts("filter");
  options.excludes = flags.texts("exclude");
  options.backends = flags.texts("backend");
  options.memory_threshold = std::stod(flags.text_or("memory-threshold", "0.10"));
  if (!(options.memory_threshold >= 0) || !std::isfinite(options.memory_threshold))
    throw usage_error("argument --memory-threshold: must be a fraction of 0 or more (0.10 is 10%)");
  const auto fail_on = parse_fail_on(flags.text_or("fail-on", "slower,broken,more_memory"));
  const std::string format = flags.text_or("format", "table");

  const auto warn = [](const std::string& message) {
    std::cerr << program << ": warning: " << message << "\n";
  };
  const auto a = load_run(runs[0], options, warn);
  const auto b = load_run(runs[1], options, warn);
  const comparison c = compare_runs(a, b, options);
  try {  // both directories' run_context.json: what else changed, above the rows (csv/json: stderr)
    const auto context_a = run_context_of_directory(runs[0]);
    const auto context_b = run_context_of_directory(runs[1]);
    if (context_a && context_b)
      (format == "csv" || format == "json" ? std::cerr : std::cout) << run_context_diff_text(
          run_context_differences(*context_a, *context_b), format == "markdown");
  } catch (const std::exception& e) { warn(std::string("run contexts not compared: ") + e.what()); }
  if (format == "markdown") std::cout << comparison_markdown(c);
  else if (format == "csv") std::cout << comparison_csv(c);
  else if (format == "json") std::cout << comparison_json(c, options, fail_on);
  else std::cout << comparison_table(c);
  std::cout.flush();
  if (!std::cout) throw std::runtime_error("cannot write the comparison to stdout");
  const auto paired = std::count_if(c.rows.begin(), c.rows.end(),
                                    [](const comparison_row& r) { return r.a && r.b; });
  if (paired == 0 && !fail_on.empty()) {
    // An empty B (a nightly run that died) or one from another machine matches nothing: a gate
    // that passed then would hide exactly the failures it exists for.
    std::cerr << program << ": error: no configuration is in both runs (" << c.rows.size()
              << " in one run only): nothing was compared; check that B ran and that both runs "
                 "used the same accelerator, suite and batch sizes (--fail-on none accepts this)\n";
    return 1;
  }
  return gate_fails(c, fail_on) ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* const description =
      "Compares two runs (A: reference, B: candidate) per configuration (suite, model, test, "
      "backend,\nbatch size, accelerator): ratio = median B / median A of --metric past the "
      "first --skip-samples\n(> 1: B is slower) with its bootstrap interval (confidence 1 - "
      "--alpha), and a verdict:\n"
      "  SLOWER/FASTER  beyond --threshold and, with --min-samples per side, the ratio's "
      "interval excludes 1\n                 ('within noise' otherwise; --decide-by "
      "mann-whitney: a two-sided Mann-Whitney U\n                 test with p < --alpha, "
      "scipy's mannwhitneyu, method='auto'); fewer samples:\n                 the threshold "
      "alone ('few samples');\n"
      "  MORE_MEMORY    not SLOWER, but B's peak memory rose beyond --memory-threshold and "
      "the repeats'\n                 spread (a faster B that needs more memory is no pure "
      "win);\n"
      "  SAME           neither;\n"
      "  BROKEN         A ran, B has an error/SKIP record, or verification PASS in A and "
      "failed in B;\n"
      "  FIXED          the reverse;\n"
      "  BOTH_FAILED    error/SKIP (or failed verification) on both sides;\n"
      "  MISSING_IN_B / NEW_IN_B   in one run only;\n"
      "  UNUSABLE       a record whose samples are NaN, non-numeric or empty, or timings on "
      "one side only.\nGeomeans of the ratios per backend and overall follow the rows. Exit "
      "status: 0, or 1 when a verdict\nin --fail-on occurs (the nightly gate) or no configuration is in both runs, 2 on bad input. "
      "Corrupt lines are reported on stderr.";
  return run_flag_tool(program, description, specs(), {argv + 1, argv + argc}, run,
                       /*failure_status=*/2);
}
