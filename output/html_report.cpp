#include "output/html_report.hpp"

#include "backends/backend_name.hpp"
#include "core/repeat_statistics.hpp"

#include "core/results_record.hpp"
#include "core/text_file.hpp"
#include "output/aggregate_report.hpp"
#include "output/memory_section.hpp"
#include "output/record_figures.hpp"
#include "output/speedup_statistics.hpp"
#include "output/html_text.hpp"
#include "output/svg_chart.hpp"
#include "output/verification_codes.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

namespace benchmatrix {

namespace {

using svg::escape_xml;
using html::anchor;
using html::case_insensitive_less;
using html::fixed;
using html::lower;
using html::utc_text;

/// The first non-blank line of a message, at most `limit` code points (then "…").
std::string first_line(const std::string& text, size_t limit = 70) {
  std::string line;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    line = text.substr(start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) break;
    line.clear();
    start = end + 1;
  }
  const size_t first = line.find_first_not_of(" \t\r");
  line = first == std::string::npos ? "" : line.substr(first, line.find_last_not_of(" \t\r") + 1 - first);
  size_t points = 0;
  for (size_t i = 0; i < line.size(); ++i)
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 && ++points > limit)
      return line.substr(0, i) + "…";
  return line;
}

/// Text for an attribute value: escaped, with line breaks and tabs as character references (an XML
/// parser would turn literal ones into spaces; HTML keeps either, so tooltips keep their lines).
std::string escape_attribute(const std::string& text) {
  std::string out;
  for (char c : escape_xml(text)) {
    if (c == '\n') out += "&#10;";
    else if (c == '\r') out += "&#13;";
    else if (c == '\t') out += "&#9;";
    else out += c;
  }
  return out;
}

/// An identifier usable in id attributes and fragment links.
std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789@%+=:,./-_") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// --- the model of the page ------------------------------------------------------------------------

/// Codes that mean the verifier compared nothing.
bool unverified_code(const std::string& code) {
  return outcome_of_code(code) == verification_outcome::not_verified;
}

/// Codes a verifier gives together with an error message (the verifier raised).
bool verifier_error_code(const std::string& code) {
  return code == "EAGER_FAILED" || code == "EXCEPTION_RAISED";
}

/// What one (test, model, backend) shows.
struct cell {
  const report_record* shown = nullptr;  // the last timing, error or SKIP record
  std::string verification;              // the last informative code (see the header)
  std::optional<sample_summary> summary;
  std::optional<median_interval> time;   // ms: median of the counted repeats, bootstrap interval
  std::vector<double> used;              // ms
  std::optional<speedup_figure> speedup;  // over the baseline: paired (the record's) or unpaired
  std::optional<long long> batch_size;
};

/// What a per-model table and its charts cover: one test on one accelerator (model) and suite. A
/// results file may hold several (experiment_runner's default --accelerator list gives cpu and cuda
/// records): their timings are never mixed in one table.
struct section_key {
  std::string test, accelerator, suite;
  auto operator<=>(const section_key&) const = default;
};

section_key section_of(const report_record& r) {
  return {r.test, r.accelerator + (r.accelerator_model.empty() ? "" : " — " + r.accelerator_model),
          r.suite};
}

/// The geomean of one backend's per-model median speedups. No interval: the models are not a
/// sample of anything, and a bootstrap over so few ratios would be a fake; instead it says how
/// many of the per-model speedups are changes (their intervals exclude 1).
struct geomean_figure {
  double value = 1;
  size_t models = 0, faster = 0, slower = 0, paired = 0;
};

struct test_results {
  std::string test;
  std::string title;  // the test, plus the accelerator and suite when the page has several
  std::string id;     // the section's anchor
  std::map<std::string, std::string> colors;  // backend → chart colour, the same on every chart
  std::vector<std::string> backends;  // baseline first, then known order, then by name
  std::vector<std::string> models;    // case-insensitive order
  std::map<std::pair<std::string, std::string>, cell> cells;  // (model, backend)
  std::map<std::string, geomean_figure> geomean;  // by backend
  bool has_baseline = false;
};

std::vector<std::string> ordered_backends(const std::set<std::string>& present, const std::string& baseline) {
  std::vector<std::string> out;
  if (present.count(baseline)) out.push_back(baseline);
  for (const auto& [name, title] : known_backends())
    if (present.count(name) && name != baseline) out.push_back(name);
  for (const auto& name : present)
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

std::vector<std::string> ordered_tests(const std::vector<report_record>& records) {
  std::set<std::string> tests;
  for (const auto& r : records) tests.insert(r.test);
  std::vector<std::string> out;
  for (const char* t : {"eval", "train"})
    if (tests.erase(t)) out.emplace_back(t);
  out.insert(out.end(), tests.begin(), tests.end());
  return out;
}

/// The sections of the page: tests in ordered_tests' order, then accelerators and suites in the
/// order their first record appears.
std::vector<section_key> ordered_sections(const std::vector<report_record>& records) {
  std::vector<section_key> out;
  for (const auto& test : ordered_tests(records))
    for (const auto& r : records)
      if (r.test == test && std::find(out.begin(), out.end(), section_of(r)) == out.end())
        out.push_back(section_of(r));
  return out;
}

test_results build_test(const std::vector<report_record>& records, const section_key& section,
                        const std::vector<section_key>& every_section, const html_report_options& options) {
  test_results t;
  t.test = section.test;
  bool several_accelerators = false, several_suites = false;
  for (const auto& other : every_section) {
    several_accelerators |= other.accelerator != section.accelerator;
    several_suites |= other.suite != section.suite;
  }
  t.title = section.test;
  t.id = section.test;
  if (several_accelerators || several_suites) {
    std::string where;
    if (several_accelerators) where += section.accelerator;
    if (several_suites) where += (where.empty() ? "" : ", ") + std::string("suite ") + section.suite;
    t.title += " — " + where;
    const auto position = std::find(every_section.begin(), every_section.end(), section);
    t.id += "-" + std::to_string(position - every_section.begin() + 1);
  }
  std::set<std::string> every_backend;
  for (const auto& r : records) every_backend.insert(r.backend);
  const auto page_order = ordered_backends(every_backend, options.baseline);
  for (size_t i = 0; i < page_order.size(); ++i) t.colors[page_order[i]] = svg::palette_color(i);
  std::set<std::string> backends, models;
  for (const auto& r : records) {
    if (section_of(r) != section) continue;
    backends.insert(r.backend);
    models.insert(r.model);
    cell& c = t.cells[{r.model, r.backend}];
    if (r.kind != record_kind::empty) c.shown = &r;
    // a later code replaces an earlier one, except that "not verified" never hides a verdict
    if (!r.verification_code.empty() &&
        (!unverified_code(r.verification_code) || unverified_code(c.verification)))
      c.verification = r.verification_code;
    if (r.batch_size) c.batch_size = r.batch_size;
  }
  t.backends = ordered_backends(backends, options.baseline);
  t.models.assign(models.begin(), models.end());
  std::sort(t.models.begin(), t.models.end(), case_insensitive_less);
  t.has_baseline = backends.count(options.baseline) != 0;
  for (auto& [key, c] : t.cells)
    if (c.shown && c.shown->kind == record_kind::timing) {
      c.summary = summarize_samples(c.shown->per_iter_ms, options.skip_repeats);
      c.time = time_interval(c.shown->per_iter_ms, options.skip_repeats);
      c.used = used_samples(c.shown->per_iter_ms, options.skip_repeats);
    }
  for (const auto& backend : t.backends) {
    if (backend == options.baseline) continue;
    std::vector<datapoint> speedups;
    geomean_figure g;
    for (const auto& model : t.models) {
      auto e = t.cells.find({model, backend});
      if (e == t.cells.end() || !e->second.summary) continue;
      cell& c = e->second;
      // A paired speedup against this page's baseline is the record's own; else the ratio of the
      // two records' medians.
      if (c.shown->paired && c.shown->paired->baseline == options.baseline) {
        c.speedup = speedup_figure{c.shown->paired->speedup, speedup_kind::paired};
      } else if (const auto b = t.cells.find({model, options.baseline});
                 b != t.cells.end() && b->second.summary) {
        c.speedup = unpaired_speedup(b->second.shown->per_iter_ms, c.shown->per_iter_ms,
                                     options.skip_repeats);
      }
      if (!c.speedup || !(c.speedup->interval.median > 0)) {
        c.speedup.reset();
        continue;
      }
      t.has_baseline |= c.speedup->kind == speedup_kind::paired;
      speedups.push_back({c.speedup->interval.median, 0});
      const auto verdict = verdict_of(c.speedup->interval);
      g.faster += verdict == speedup_verdict::faster;
      g.slower += verdict == speedup_verdict::slower;
      g.paired += c.speedup->kind == speedup_kind::paired;
    }
    if (speedups.empty()) continue;
    g.value = geomean_of(speedups).avg;
    g.models = speedups.size();
    t.geomean[backend] = g;
  }
  return t;
}

// --- HTML pieces ------------------------------------------------------------------------------------

std::string strip_xml_declaration(std::string svg) {
  if (svg.rfind("<?xml", 0) == 0) svg.erase(0, svg.find('\n') + 1);
  return svg;
}

std::string th(const std::string& text, const std::string& attributes = "") {
  return "<th" + (attributes.empty() ? "" : " " + attributes) + ">" + escape_xml(text) + "</th>";
}

std::string models_text(size_t n) { return std::to_string(n) + (n == 1 ? " model" : " models"); }

/// Which repeats the statistics use, in words.
std::string repeats_text(size_t skip) {
  if (skip == 0) return "every repeat";
  if (skip == 1) return "every repeat but repeat 0 (compilation and warm-up)";
  return "every repeat but repeats 0–" + std::to_string(skip - 1) + " (compilation and warm-up)";
}

/// A speedup cell's class: coloured only when the interval excludes 1.
const char* speedup_class(const median_interval& speedup) {
  switch (verdict_of(speedup)) {
    case speedup_verdict::faster: return "faster";
    case speedup_verdict::slower: return "slower";
    case speedup_verdict::within_noise: break;
  }
  return "within-noise";
}

/// "2 models: 1 faster, 0 slower, 1 within noise" (paired ones counted when there are any).
std::string geomean_counts(const geomean_figure& g) {
  std::string out = std::to_string(g.faster) + " faster, " + std::to_string(g.slower) +
                    " slower, " + std::to_string(g.models - g.faster - g.slower) + " within noise";
  if (g.paired) out += "; " + std::to_string(g.paired) + " paired";
  return out;
}

/// The noise badge of a record: its verdict, the reasons as the tooltip; "—" for none.
std::string noise_badge(const report_record& r) {
  if (!r.noise)
    return "<span class=\"noise none\" title=\"no noise verdict in the record (written before "
           "runners recorded one)\">noise —</span>";
  std::string reasons;
  for (const auto& reason : r.noise->reasons) reasons += (reasons.empty() ? "" : "\n") + reason;
  const std::string cls = r.noise->verdict == "quiet" || r.noise->verdict == "noisy" ? r.noise->verdict
                                                                                     : "unknown";
  return "<span class=\"noise " + cls + "\" title=\"" +
         escape_attribute(reasons.empty() ? "no reasons given" : reasons) + "\">noise " +
         escape_xml(r.noise->verdict) + "</span>";
}

/// The GPU-busy figure of a --profile-cupti record; "" without one.
std::string gpu_busy_badge(const report_record& r) {
  if (!r.gpu_busy) return "";
  const auto& f = r.gpu_busy->fraction;
  const std::string how = "median CUPTI busy time per iteration (its own pass after the timed "
                          "repeats) / median per-iteration time of the timed repeats; the rest "
                          "is host time; 95% interval ";
  return "<br/><span class=\"gpu-busy\" title=\"" +
         escape_attribute(how + fixed(f.low, 2) + "–" + fixed(f.high, 2)) + "\">GPU busy " +
         fixed(f.median, 2) + "</span>";
}

/// A verification code as a table cell shows it: a short label, the code itself as the tooltip.
std::string code_span(const std::string& code) {
  if (code.empty()) return "<span class=\"muted\" title=\"no verification_code\">none</span>";
  static const std::map<std::string, std::string> labels = {
      {"VERIFIER_SKIPPED", "skipped"},         {"VERIFIER_DIDNT_RUN", "didn't run"},
      {"NONDETERMINISTIC_EAGER_RUN", "nondeterministic"}, {"EAGER_FAILED", "eager failed"},
      {"EXCEPTION_RAISED", "exception"},       {"SKIP_VERIFICATION", "skipped"}};
  const auto label = labels.find(code);
  const char* cls = code == "PASS"                         ? "pass"
                    : unverified_code(code)                ? "muted"
                    : code == "NONDETERMINISTIC_EAGER_RUN" ? "warn"
                                                           : "fail";
  return std::string("<span class=\"code ") + cls + "\" title=\"" + escape_xml(code) + "\">" +
         escape_xml(label == labels.end() ? code : label->second) + "</span>";
}

std::string section_context(const std::vector<report_record>& records, const run_context_info& context,
                            const html_report_options& options) {
  std::set<std::string> accelerators, suites, models, backends, tests;
  std::set<long long> batch_sizes, repeats, iterations;
  std::optional<double> first, last;
  std::set<double> timestamps;
  for (const auto& r : records) {
    accelerators.insert(r.accelerator + (r.accelerator_model.empty() ? "" : " — " + r.accelerator_model));
    suites.insert(r.suite);
    models.insert(r.model);
    backends.insert(r.backend);
    tests.insert(r.test);
    if (r.batch_size) batch_sizes.insert(*r.batch_size);
    if (r.repeat) repeats.insert(*r.repeat);
    if (r.iterations_per_run) iterations.insert(*r.iterations_per_run);
    if (r.timestamp) {
      timestamps.insert(*r.timestamp);
      first = first ? std::min(*first, *r.timestamp) : *r.timestamp;
      last = last ? std::max(*last, *r.timestamp) : *r.timestamp;
    }
  }
  const auto join = [](const auto& values) {
    std::string out;
    for (const auto& v : values) {
      std::string text;
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) text = v;
      else text = std::to_string(v);
      out += (out.empty() ? "" : ", ") + text;
    }
    return out.empty() ? std::string("—") : out;
  };
  std::vector<std::string> backend_names;
  for (const auto& b : ordered_backends(backends, options.baseline))
    backend_names.push_back(backend_title(b) == b ? b : backend_title(b) + " (" + b + ")");
  std::vector<std::pair<std::string, std::string>> rows = {
      {"Results", options.source + ": " + std::to_string(records.size()) + " records" +
                      (options.skipped_lines ? ", " + std::to_string(options.skipped_lines) +
                                                      " unusable lines skipped" : "")},
      {"Accelerator", join(accelerators)},
      {"Suites", join(suites)},
      {"Models", std::to_string(models.size())},
      {"Backends", join(backend_names)},
      {"Baseline", backend_title(options.baseline) +
                       (backends.count(options.baseline) ? "" : " (no records of it: no speedups)")},
      {"Tests", join(tests)},
      {"Batch sizes", join(batch_sizes)},
      {"Repeats", join(repeats)},
      {"Iterations per run", join(iterations)},
      {"First timestamp", first ? utc_text(*first) : "—"},
      {"Last timestamp", last ? utc_text(*last) + " (" + std::to_string(timestamps.size()) +
                                    " sweep timestamp" + (timestamps.size() == 1 ? "" : "s") + ")"
                              : "—"},
  };
  std::string out = "<section id=\"context\">\n<h2>Run context</h2>\n<table class=\"kv\">\n";
  for (const auto& [k, v] : rows) out += "<tr>" + th(k) + "<td>" + escape_xml(v) + "</td></tr>\n";
  out += "</table>\n<h3>run_context.json</h3>\n";
  if (!context.present) {
    out += "<p class=\"muted\">No run_context.json in the results directory (the sweep predates it, "
           "or it was written elsewhere).</p>\n";
  } else if (!context.problem.empty()) {
    out += "<p class=\"fail\">run_context.json could not be used: " + escape_xml(context.problem) + "</p>\n";
  } else {
    out += "<table class=\"kv\" id=\"run-context\">\n";
    for (const auto& [k, v] : context.entries)
      out += "<tr>" + th(k) + "<td><code>" + escape_xml(v) + "</code></td></tr>\n";
    out += "</table>\n";
  }
  return out + "</section>\n";
}

std::string section_summary(const std::vector<test_results>& tests, const html_report_options& options) {
  std::set<std::string> all;
  for (const auto& t : tests) all.insert(t.backends.begin(), t.backends.end());
  const auto backends = ordered_backends(all, options.baseline);
  std::string out = "<section id=\"summary\">\n<h2>Geomean speedup over " +
                    escape_xml(backend_title(options.baseline)) + "</h2>\n";
  out += "<p class=\"note\">Geometric mean of the per-model median speedups (paired where the record "
         "has one, else the ratio of the two records' median per-iteration times). No interval is "
         "shown for it: instead, how many of the per-model speedups are changes (their 95% interval "
         "excludes 1) and how many are within noise.</p>\n";
  out += "<table id=\"geomean\">\n<thead><tr>" + th("Backend");
  for (const auto& t : tests) out += th(t.title);
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& b : backends) {
    if (b == options.baseline) continue;
    out += "<tr>" + th(backend_title(b), "scope=\"row\"");
    for (const auto& t : tests) {
      const auto g = t.geomean.find(b);
      if (g == t.geomean.end()) {
        out += "<td class=\"muted\">—</td>";
        continue;
      }
      out += "<td class=\"num\">" + fixed(g->second.value, 2) + " <span class=\"muted\">(" +
             models_text(g->second.models) + ")</span><br/><span class=\"counts\">" +
             escape_xml(geomean_counts(g->second)) + "</span></td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n</section>\n";
}

std::string section_verification(const std::vector<report_record>& records,
                                 const std::vector<std::string>& tests,
                                 const html_report_options& options) {
  struct counts {
    std::map<std::string, size_t> codes;
    size_t errors = 0, skips = 0, total = 0;
  };
  std::map<std::pair<std::string, std::string>, counts> table;  // (backend, test)
  std::set<std::string> codes, backends;
  for (const auto& r : records) {
    counts& c = table[{r.backend, r.test}];
    backends.insert(r.backend);
    ++c.total;
    if (r.kind == record_kind::skip) ++c.skips;
    else if (r.kind == record_kind::error && !verifier_error_code(r.verification_code)) ++c.errors;
    else {
      const std::string code = r.verification_code.empty() ? "(none)" : r.verification_code;
      ++c.codes[code];
      codes.insert(code);
    }
  }
  std::vector<std::string> columns;
  for (const char* known : {"PASS", "FAIL", "NONDETERMINISTIC_EAGER_RUN", "EAGER_FAILED", "EXCEPTION_RAISED",
                            "VERIFIER_SKIPPED", "VERIFIER_DIDNT_RUN"})
    if (codes.erase(known)) columns.emplace_back(known);
  columns.insert(columns.end(), codes.begin(), codes.end());

  std::string out = "<section id=\"verification\">\n<h2>Verification</h2>\n";
  out += "<p class=\"note\">Records per verification_code. Pass rate: PASS over the records the verifier "
         "ran on (every code but VERIFIER_SKIPPED, VERIFIER_DIDNT_RUN and none, and the older "
         "SKIP_VERIFICATION, VERIFIER_SKIPPED_UNEXPECTEDLY, CANNOT_PROCEED_WITH_VERIFICATION and "
         "NO_OUTPUT_PROVIDED). Error records (a failed run) and SKIP records "
         "(compatibility skips) are counted apart.</p>\n";
  out += "<table id=\"verification-table\">\n<thead><tr>" + th("Backend") + th("Test");
  for (const auto& c : columns) out += "<th class=\"code\">" + escape_xml(c) + "</th>";
  out += th("errors") + th("SKIP") + th("records") + th("pass rate") + "</tr></thead>\n<tbody>\n";
  for (const auto& b : ordered_backends(backends, options.baseline))
    for (const auto& t : tests) {
      const auto it = table.find({b, t});
      if (it == table.end()) continue;
      const counts& c = it->second;
      out += "<tr>" + th(backend_title(b), "scope=\"row\"") + "<td>" + escape_xml(t) + "</td>";
      size_t verified = 0;
      for (const auto& code : columns) {
        const auto n = c.codes.count(code) ? c.codes.at(code) : 0;
        if (code != "(none)" && !unverified_code(code)) verified += n;
        out += "<td class=\"num" + std::string(n ? "" : " muted") + "\">" + std::to_string(n) + "</td>";
      }
      out += "<td class=\"num" + std::string(c.errors ? " fail" : " muted") + "\">" +
             std::to_string(c.errors) + "</td><td class=\"num" + (c.skips ? "" : " muted") + "\">" +
             std::to_string(c.skips) + "</td><td class=\"num\">" + std::to_string(c.total) + "</td>";
      const size_t passed = c.codes.count("PASS") ? c.codes.at("PASS") : 0;
      out += verified ? "<td class=\"num\">" + std::to_string(passed) + "/" + std::to_string(verified) +
                            " (" + fixed(100.0 * static_cast<double>(passed) / static_cast<double>(verified), 1) +
                            "%)</td>"
                      : std::string("<td class=\"muted\">not verified</td>");
      out += "</tr>\n";
    }
  return out + "</tbody>\n</table>\n</section>\n";
}

std::string failure_cell(const report_record& r, size_t columns) {
  const bool skip = r.kind == record_kind::skip;
  std::string text = first_line(r.error);
  if (skip && text == "SKIP") text = "SKIP";
  else if (!skip) text = "error: " + text;
  return "<td colspan=\"" + std::to_string(columns) + "\" class=\"" + (skip ? "skip" : "error") +
         "\" title=\"" + escape_attribute(r.error) + "\">" + escape_xml(text) + "</td>";
}

std::string model_table(const test_results& t, const html_report_options& options) {
  std::string out = "<table class=\"models\" id=\"models-" + anchor(t.id) + "\">\n<thead>\n<tr>" +
                    th("Model", "rowspan=\"2\"") + th("Batch", "rowspan=\"2\"");
  for (const auto& b : t.backends) out += th(backend_title(b), "colspan=\"3\" class=\"backend\"");
  out += "</tr>\n<tr>";
  for (size_t i = 0; i < t.backends.size(); ++i)
    out += th("median ms [95%]", "class=\"sub\"") + th("speedup", "class=\"sub\"") + th("verify", "class=\"sub\"");
  out += "</tr>\n</thead>\n<tbody>\n";
  for (const auto& model : t.models) {
    std::set<long long> batches;
    for (const auto& b : t.backends)
      if (const auto it = t.cells.find({model, b}); it != t.cells.end() && it->second.batch_size)
        batches.insert(*it->second.batch_size);
    std::string batch_text;
    for (long long v : batches) batch_text += (batch_text.empty() ? "" : "/") + std::to_string(v);
    out += "<tr>" + th(model, "scope=\"row\" class=\"model\"") + "<td class=\"num\">" +
           escape_xml(batch_text.empty() ? "—" : batch_text) + "</td>";
    for (const auto& b : t.backends) {
      const auto it = t.cells.find({model, b});
      if (it == t.cells.end()) {
        out += "<td colspan=\"3\" class=\"muted\">no record</td>";
        continue;
      }
      const cell& c = it->second;
      if (c.shown && c.shown->kind != record_kind::timing) {
        out += failure_cell(*c.shown, 2) + "<td>" + code_span(c.verification) + "</td>";
        continue;
      }
      if (!c.summary) {
        out += std::string("<td colspan=\"2\" class=\"muted\">") +
               (c.shown ? "no finite samples" : "no timings") + "</td><td>" + code_span(c.verification) + "</td>";
        continue;
      }
      const auto& s = *c.summary;
      const auto& time = *c.time;
      out += "<td class=\"num time\" title=\"" + std::to_string(s.count) +
             " repeats; 95% bootstrap interval of the median; min " + format_ms(s.min) + ", max " +
             format_ms(s.max) + " ms\">" + format_ms(time.median) + "<br/><span class=\"range\">[" +
             format_ms(time.low) + "–" + format_ms(time.high) + "]</span><br/>" +
             noise_badge(*c.shown) + gpu_busy_badge(*c.shown) + "</td>";
      if (b == options.baseline) out += "<td class=\"muted\">baseline</td>";
      else if (c.speedup) {
        const auto& i = c.speedup->interval;
        const bool paired = c.speedup->kind == speedup_kind::paired;
        const std::string how =
            paired ? "paired: one child alternated " + backend_title(options.baseline) +
                         " and this backend (order " + c.shown->paired->order + "); median of " +
                         std::to_string(i.count) + " per-pair ratios, 95% bootstrap interval"
                   : "unpaired: median of " + backend_title(options.baseline) +
                         " / median of this backend, two children; 95% bootstrap interval";
        out += std::string("<td class=\"num speedup ") + speedup_class(i) + "\" title=\"" +
               escape_attribute(how) + "\">" + escape_xml(interval_text(i, 2)) +
               "<br/><span class=\"kind\">" + speedup_kind_name(c.speedup->kind) + " · " +
               speedup_verdict_name(verdict_of(i)) + "</span></td>";
      } else out += "<td class=\"muted\">—</td>";
      out += "<td>" + code_span(c.verification) + "</td>";
    }
    out += "</tr>\n";
  }
  if (t.has_baseline) {
    out += "<tr class=\"geomean\">" + th("GEOMEAN", "scope=\"row\"") + "<td></td>";
    for (const auto& b : t.backends) {
      const auto g = t.geomean.find(b);
      if (b == options.baseline || g == t.geomean.end()) {
        out += "<td colspan=\"3\"></td>";
        continue;
      }
      out += "<td class=\"muted\">" + models_text(g->second.models) + "</td><td class=\"num speedup\" title=\"" +
             escape_attribute(geomean_counts(g->second)) + "\">" + fixed(g->second.value, 2) +
             "</td><td></td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string speedup_chart(const test_results& t, const html_report_options& options) {
  svg::bar_chart chart;
  std::vector<std::string> series_backends;
  for (const auto& b : t.backends)
    if (b != options.baseline) series_backends.push_back(b);
  for (const auto& model : t.models) {
    bool any = false;
    for (const auto& b : series_backends)
      if (const auto it = t.cells.find({model, b}); it != t.cells.end() && it->second.speedup) any = true;
    if (any) chart.categories.push_back(model);
  }
  if (chart.categories.empty() || series_backends.empty()) return "";
  for (const auto& b : series_backends) {
    svg::bar_series s;
    s.name = backend_title(b);
    s.color = t.colors.at(b);
    for (const auto& model : chart.categories) {
      const auto it = t.cells.find({model, b});
      const bool has = it != t.cells.end() && it->second.speedup;
      s.values.push_back(has ? it->second.speedup->interval.median : svg::no_value);
      s.lows.push_back(has ? it->second.speedup->interval.low : svg::no_value);
      s.highs.push_back(has ? it->second.speedup->interval.high : svg::no_value);
    }
    chart.series.push_back(std::move(s));
  }
  const double rows = static_cast<double>(chart.categories.size());
  const double per_category = 10.0 * static_cast<double>(chart.series.size()) + 10;  // px
  chart.frame.title = "Speedup over " + backend_title(options.baseline) + " — " + t.title;
  chart.frame.x_label = "speedup (median time of " + backend_title(options.baseline) +
                        " / median time of the backend, or paired), 95% bootstrap interval";
  chart.frame.width_in = 10;
  chart.frame.height_in = std::max(3.0, (rows * per_category + 110) / 96);
  chart.reference_x = 1.0;
  chart.legend_outside = true;
  return "<figure class=\"chart speedup-chart\">\n" + strip_xml_declaration(svg::render_bar_chart(chart)) +
         "</figure>\n";
}

std::string distribution_grid(const test_results& t, const html_report_options& options) {
  std::string out;
  for (const auto& model : t.models) {
    svg::distribution_chart chart;
    bool any = false;
    for (const auto& b : t.backends) {
      svg::distribution d;
      d.label = backend_title(b);
      d.color = t.colors.at(b);
      if (const auto it = t.cells.find({model, b}); it != t.cells.end()) d.values = it->second.used;
      any = any || !d.values.empty();
      chart.groups.push_back(std::move(d));
    }
    if (!any) continue;
    chart.frame.title = model;
    chart.frame.y_label = "ms per iteration";
    chart.frame.width_in = 4.5;
    chart.frame.height_in = 3.0;
    out += "<figure class=\"chart small\">" + strip_xml_declaration(svg::render_distribution_chart(chart)) +
           "</figure>\n";
  }
  if (out.empty()) return "<p class=\"muted\">No timings.</p>\n";
  return "<p class=\"note\">Per-iteration time of each repeat (" + escape_xml(repeats_text(options.skip_repeats)) +
         "): box from the first to the third quartile, median line, whiskers at min and max, each repeat "
         "a dot. Colours follow the backends' order; an empty slot is a backend without timings.</p>\n"
         "<div class=\"grid\">\n" + out + "</div>\n";
}

std::string section_test(const test_results& t, const html_report_options& options) {
  const std::string id = anchor(t.id);
  std::string name = t.test == "eval" ? "eval (inference)" : t.test == "train" ? "train (training)" : t.test;
  name += t.title.substr(t.test.size());  // " — accelerator, suite" when the page has several
  std::string out = "<section id=\"test-" + id + "\">\n<h2>" + escape_xml(name) + "</h2>\n<h3>Per-model results</h3>\n";
  out += "<p class=\"note\">Median per-iteration time in ms over " + escape_xml(repeats_text(options.skip_repeats)) +
         ", with its 95% bootstrap interval [low–high] (min and max in the tooltip). Speedup = "
         "median of " + escape_xml(backend_title(options.baseline)) +
         " / median of the backend with its 95% bootstrap interval, labelled by kind: <b>paired</b> "
         "(one child alternated both, repeat by repeat: the record's own per-pair ratios) or "
         "<b>unpaired</b> (two children run at different times: ratio of their medians, more exposed "
         "to drift between runs). A speedup is green (faster) or red (slower) only when its interval "
         "excludes 1; otherwise it is grey and labelled within noise. Each time shows the record's "
         "noise verdict (hover for the reasons; — when the record has none) and, for --profile-cupti "
         "records, GPU busy = GPU-busy time / wall time per iteration (* = from different "
         "iterations; hover for how). Error and SKIP cells show the message's first line; hover for "
         "the whole text.</p>\n";
  out += "<div class=\"scroll\">\n" + model_table(t, options) + "</div>\n";
  out += "<h3>Speedup over " + escape_xml(backend_title(options.baseline)) + "</h3>\n";
  if (!t.has_baseline)
    out += "<p class=\"muted\">No " + escape_xml(options.baseline) + " records for this test: no speedups.</p>\n";
  else if (const auto chart = speedup_chart(t, options); !chart.empty())
    out += chart;
  else
    out += "<p class=\"muted\">No model has timings on both the baseline and another backend.</p>\n";
  out += "<h3>Per-repeat time distributions</h3>\n" + distribution_grid(t, options);
  return out + "</section>\n";
}

const char* const style = R"(
body { font-family: "DejaVu Sans", Arial, Helvetica, sans-serif; font-size: 14px; margin: 1.5em 2em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; border-bottom: 2px solid #ddd; padding-bottom: 0.2em; margin-top: 1.8em; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; vertical-align: top; }
thead th { background: #f0f0f0; }
th.backend { background: #e4ecf5; }
th[scope="row"] { background: #fafafa; text-align: left; font-weight: normal; }
table.kv th { text-align: left; background: #f5f5f5; white-space: nowrap; }
table.kv td { max-width: 70em; word-break: break-word; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.range { color: #777; font-size: 0.8em; }
th.sub { font-size: 0.8em; font-weight: normal; }
span.code { font-size: 0.85em; white-space: nowrap; }
.muted { color: #999; }
.pass { color: #1a7f37; font-weight: bold; }
.fail { color: #c62828; font-weight: bold; }
.warn { color: #b26a00; font-weight: bold; }
td.error { background: #fdecea; color: #8a1c1c; font-size: 0.9em; }
td.skip { background: #f3f3f3; color: #666; font-size: 0.9em; }
td.faster { color: #1a7f37; }
td.slower { color: #c62828; }
td.within-noise { color: #777; }
span.kind, span.counts { font-size: 0.8em; color: #555; font-weight: normal; }
span.noise, span.gpu-busy { font-size: 0.75em; white-space: nowrap; }
span.noise.quiet { color: #1a7f37; }
span.noise.noisy { color: #b26a00; font-weight: bold; }
span.noise.unknown, span.noise.none { color: #999; }
tr.geomean th, tr.geomean td { border-top: 2px solid #888; font-weight: bold; }
th.code { font-size: 0.8em; }
.note { color: #555; font-size: 0.9em; max-width: 75em; }
.scroll { overflow-x: auto; }
figure { margin: 0.5em 0; }
figure.chart svg { max-width: 100%; height: auto; border: 1px solid #eee; }
.grid { display: flex; flex-wrap: wrap; gap: 8px; }
.grid figure { margin: 0; }
code { font-size: 0.9em; }
tr.regression td, tr.regression th { background: #fdecea; }
tr.improved td, tr.improved th { background: #e8f5e9; }
td.verdict { font-weight: bold; white-space: nowrap; }
td.reason { font-size: 0.8em; color: #555; max-width: 28em; }
)";

}  // namespace

// --- records ------------------------------------------------------------------------------------

report_record parse_report_record(const results_record& r, size_t line_number) {
  report_record out;
  out.line_number = line_number;
  const auto& id = r.identity;
  out.model = id.model_name;
  out.suite = id.suite_name;
  out.test = id.experiment.test;
  out.accelerator = id.experiment.accelerator;
  out.accelerator_model = id.accelerator_model;
  out.backend = display_config_backend(id.experiment);
  out.batch_size = id.batch_size;
  if (r.has("repeat")) out.repeat = id.repeat;
  if (r.has("iterations_per_run")) out.iterations_per_run = id.iterations_per_run;
  if (r.has("timestamp")) out.timestamp = id.timestamp;
  out.verification_code = r.verification_code;
  out.noise = noise_of(r);
  if (const auto error = r.error()) {
    out.error = *error;
    out.kind = r.is_skip() ? record_kind::skip : record_kind::error;
    return out;
  }
  out.paired = paired_of(r);
  out.gpu_busy = gpu_busy_of(r);
  out.peak_memory = peak_memory_of(r);
  const std::vector<double> seconds = r.per_iter_seconds();
  if (!seconds.empty()) {
    out.kind = record_kind::timing;
    for (double s : seconds) out.per_iter_ms.push_back(std::isfinite(s) ? s * 1e3 : NAN);
  }
  return out;
}

std::vector<report_record> load_report_records(const std::filesystem::path& results_file,
                                               const std::function<void(const std::string&)>& warn) {
  std::error_code ec;
  if (!std::filesystem::exists(results_file, ec))
    throw std::runtime_error(results_file.string() + " does not exist (no results to report)");
  if (!std::filesystem::is_regular_file(results_file, ec))
    throw std::runtime_error(results_file.string() + " is not a regular file");
  if (!std::ifstream(results_file)) throw std::runtime_error("cannot read " + results_file.string());
  std::vector<report_record> records;
  const auto lines = read_records_for_report(results_file, warn);
  for (const auto& line : lines) {
    try {
      records.push_back(parse_report_record(line.record, line.line_number));
    } catch (const std::exception& e) {  // a "paired" or "noise" key not of the record contract
      warn(results_file.string() + ":" + std::to_string(line.line_number) + ": skipped: " + e.what());
    }
  }
  return records;
}

std::vector<std::pair<std::string, std::string>> run_context_entries(const json_value& object) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!object.IsObject()) return out;
  for (const auto& m : object.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    const json_value& v = m.value;
    std::string text;
    if (v.IsString()) {
      text.assign(v.GetString(), v.GetStringLength());
    } else if (v.IsNull()) {
      text = "null";
    } else if (v.IsNumber()) {
      text = v.IsInt64() ? std::to_string(v.GetInt64()) : python_float_repr(v.GetDouble());
      if ((key == "started" || key == "timestamp" || key == "finished") && std::isfinite(v.GetDouble()) &&
          v.GetDouble() > 0)
        text += " (" + utc_text(v.GetDouble()) + ")";
    } else if (v.IsArray() && std::all_of(v.Begin(), v.End(), [](const json_value& x) { return x.IsString(); })) {
      for (const auto& x : v.GetArray())
        text += (text.empty() ? "" : " ") + shell_quote(std::string(x.GetString(), x.GetStringLength()));
    } else {
      text = to_python_json(v);
    }
    out.emplace_back(key, text);
  }
  return out;
}

run_context_info read_run_context(const std::filesystem::path& file) {
  run_context_info info;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return info;
  info.present = true;
  std::ifstream in(file);
  if (!in || !std::filesystem::is_regular_file(file, ec)) {
    info.problem = "cannot read " + file.string();
    return info;
  }
  try {
    const auto document = parse_json(read_text_file(file), file.string());
    if (!document.IsObject()) {
      info.problem = file.string() + " does not hold a JSON object";
      return info;
    }
    info.entries = run_context_entries(document);
  } catch (const std::exception& e) {
    info.problem = e.what();
  }
  return info;
}

// --- statistics -----------------------------------------------------------------------------------

std::vector<double> used_samples(const std::vector<double>& values, size_t skip) {
  return counted_repeats(values, skip);
}

std::optional<sample_summary> summarize_samples(const std::vector<double>& values, size_t skip) {
  const auto used = counted_repeats(values, skip);
  const auto stats = summarize_repeats(values, skip);
  if (!stats) return std::nullopt;
  sample_summary s;
  s.count = stats->count;
  s.std = mean_and_sample_std(used).std;
  s.min = stats->min;
  s.max = stats->max;
  s.median = stats->median;
  return s;
}

std::string verification_code_html(const std::string& code) { return code_span(code); }

std::string format_ms(double ms) {
  if (!std::isfinite(ms)) return python_float_repr(ms);
  if (ms == 0) return "0";
  const int decimals = std::clamp(3 - static_cast<int>(std::floor(std::log10(std::fabs(ms)))), 0, 6);
  return fixed(ms, decimals);
}

// --- the page ---------------------------------------------------------------------------------------

namespace {

/// The page's head, its <h1> and the opening of its navigation bar.
std::string page_start(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>" +
         escape_xml(title) + "</title>\n<style>" + style + "</style>\n</head>\n<body>\n<h1>" +
         escape_xml(title) + "</h1>\n<nav>";
}

std::string nav_links(const std::vector<html_section>& sections) {
  std::string out;
  for (const auto& s : sections)
    out += "<a href=\"#" + anchor(s.id) + "\">" + escape_xml(s.title) + "</a>";
  return out;
}

std::string sections_html(const std::vector<html_section>& sections) {
  std::string out;
  for (const auto& s : sections) out += s.html;
  return out;
}

}  // namespace

std::string render_html_report(const std::vector<report_record>& records, const run_context_info& context,
                               const html_report_options& options,
                               const std::vector<html_section>& extra_sections) {
  const auto tests = ordered_tests(records);
  const auto sections = ordered_sections(records);
  std::vector<test_results> results;
  for (const auto& section : sections) results.push_back(build_test(records, section, sections, options));

  std::string out = page_start(options.title);
  out += "<a href=\"#context\">Run context</a>" + nav_links(extra_sections) +
         "<a href=\"#summary\">Geomean speedups</a><a href=\"#verification\">Verification</a>";
  for (const auto& t : results)
    out += "<a href=\"#test-" + anchor(t.id) + "\">" + escape_xml(t.title) + "</a>";
  out += "</nav>\n";
  out += section_context(records, context, options);
  out += sections_html(extra_sections);
  if (records.empty()) {
    out += "<p class=\"muted\" id=\"no-records\">No usable records in " + escape_xml(options.source) + ".</p>\n";
    return out + "</body>\n</html>\n";
  }
  out += section_summary(results, options);
  out += section_verification(records, tests, options);
  for (const auto& t : results) out += section_test(t, options);
  {  // issue 26's section, after the timings
    std::vector<memory_cell_input> memory;
    std::set<std::string> backends;
    for (const auto& r : records) {
      memory.push_back({r.test, r.suite, r.model, r.backend, r.peak_memory});
      backends.insert(r.backend);
    }
    out += memory_section_html(memory, ordered_backends(backends, options.baseline),
                               options.baseline);
  }
  return out + "</body>\n</html>\n";
}

std::string render_html_page(const std::string& title, const std::vector<html_section>& sections) {
  return page_start(title) + nav_links(sections) + "</nav>\n" + sections_html(sections) +
         "</body>\n</html>\n";
}

}  // namespace benchmatrix
