#include "output/html_report_comparison.hpp"

#include "core/python_json.hpp"
#include "output/record_figures.hpp"
#include "output/run_context_diff.hpp"
#include "output/html_text.hpp"
#include "output/svg_chart.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

namespace benchmatrix {

namespace {

using svg::escape_xml;
using html::fixed;
using html::lower;

/// The per-iteration median of a config's counted repeats, in ms, with its bootstrap interval.
std::optional<median_interval> per_iter_ms(const night_config& c) {
  if (c.state.result != night_state::outcome::ran)
    return std::nullopt;
  auto interval = bootstrap_median(c.counted_repeats);
  if (!interval)
    return std::nullopt;
  interval->median *= 1e3;
  interval->low *= 1e3;
  interval->high *= 1e3;
  return interval;
}

/// The record's line as JSON (nullopt when it does not parse: the figures it would give are
/// absent).
std::optional<json_document> record_json(const night_config& c) {
  try {
    return parse_json(c.line, c.config);
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

std::optional<double> number_in(const json_value& record, const char* object, const char* key) {
  const auto o = record.FindMember(object);
  if (o == record.MemberEnd() || !o->value.IsObject())
    return std::nullopt;
  const auto v = o->value.FindMember(key);
  if (v == o->value.MemberEnd() || !v->value.IsNumber())
    return std::nullopt;
  return v->value.GetDouble();
}

/// paired.baseline and paired.speedups of a record ("" and none when it is not paired).
struct paired_list {
  std::string baseline;
  std::vector<double> speedups;
};
paired_list paired_list_of(const std::optional<json_document>& record) {
  paired_list out;
  if (!record || !record->IsObject())
    return out;
  const auto p = record->FindMember("paired");
  if (p == record->MemberEnd() || !p->value.IsObject())
    return out;
  const auto b = p->value.FindMember("baseline");
  const auto s = p->value.FindMember("speedups");
  if (b == p->value.MemberEnd() || !b->value.IsString() || s == p->value.MemberEnd() ||
      !s->value.IsArray())
    return out;
  for (const auto& v : s->value.GetArray())
    if (v.IsNumber())
      out.speedups.push_back(v.GetDouble());
  out.baseline = b->value.GetString();
  return out;
}

std::vector<accuracy_change> accuracy_changes(const std::optional<night_config>& baseline,
                                              const std::optional<night_config>& tonight) {
  std::optional<json_document> a, b;
  if (baseline)
    a = record_json(*baseline);
  if (tonight)
    b = record_json(*tonight);
  std::vector<accuracy_change> out;
  const auto figure = [](const std::optional<json_document>& d, const char* object,
                         const char* key) -> std::optional<double> {
    if (!d || !d->IsObject())
      return std::nullopt;
    return number_in(*d, object, key);
  };
  for (const auto& [object, key] :
       {std::pair{"verification", "max_rel_error"}, std::pair{"verification", "rmse_vs_fp64"},
        std::pair{"verification", "cosine_similarity"}}) {
    accuracy_change change{key, figure(a, object, key), figure(b, object, key)};
    if (change.baseline || change.tonight)
      out.push_back(change);
  }
  // --metrics accuracy: once per record, as night_history reads it.
  accuracy_change max_abs{"accuracy_max_abs_error", {}, {}};
  if (baseline)
    max_abs.baseline = baseline->state.accuracy.max_abs_error;
  if (tonight)
    max_abs.tonight = tonight->state.accuracy.max_abs_error;
  if (max_abs.baseline || max_abs.tonight)
    out.push_back(max_abs);
  return out;
}

bool improvement(gate_verdict v) {
  return v == gate_verdict::faster || v == gate_verdict::fixed;
}

std::string ms_cell(const std::optional<median_interval>& ms,
                    const std::optional<night_config>& c) {
  if (!c)
    return "<td class=\"muted\">not in this night</td>";
  if (c->state.result != night_state::outcome::ran)
    return std::string("<td class=\"") +
           (c->state.result == night_state::outcome::skipped ? "skip" : "error") + "\" title=\"" +
           escape_xml(c->state.detail) + "\">" +
           (c->state.result == night_state::outcome::skipped ? "SKIP" : "error") + "</td>";
  if (!ms)
    return "<td class=\"muted\">no timings</td>";
  return "<td class=\"num\">" + format_ms(ms->median) + "<br/><span class=\"range\">[" +
         format_ms(ms->low) + "–" + format_ms(ms->high) + "]</span></td>";
}

std::string ratio_cell(const night_comparison_row& row) {
  if (!row.ratio)
    return "<td class=\"muted\">—</td>";
  const auto& r = *row.ratio;
  const char* cls = !interval_excludes(r, 1.0) ? "within-noise"
                    : r.median > 1             ? "slower"
                                               : "faster";
  const std::string how =
      row.kind == ratio_kind::paired
          ? "paired: the baseline night's median paired speedup / tonight's, bootstrap 95% "
            "interval over both nights' per-pair speedups"
          : "unpaired: tonight's per-iteration median / the baseline night's, bootstrap 95% "
            "interval of the ratio of medians";
  return std::string("<td class=\"num ratio ") + cls + "\" title=\"" + escape_xml(how) + "\">" +
         fixed(r.median, 3) + "<br/><span class=\"range\">[" + fixed(r.low, 3) + "–" +
         fixed(r.high, 3) + "]</span> <span class=\"kind\">" +
         (row.kind == ratio_kind::paired ? "paired" : "unpaired") + "</span></td>";
}

std::string code_of(const std::optional<night_config>& c) {
  return c ? verification_code_html(c->state.verification_code) : "<span class=\"muted\">—</span>";
}

std::string figure_text(const std::optional<double>& v) {
  return v ? escape_xml(python_float_repr(*v)) : "—";
}

std::string accuracy_cell(const night_comparison_row& row) {
  if (row.accuracy.empty())
    return "<td class=\"muted\">—</td>";
  std::string out = std::string("<td class=\"accuracy") +
                    (row.verdict.result == gate_verdict::accuracy_drift ? " fail" : "") + "\">";
  for (size_t i = 0; i < row.accuracy.size(); ++i) {
    const auto& a = row.accuracy[i];
    out += (i ? "<br/>" : "") + escape_xml(a.name) + ": " + figure_text(a.baseline) + " → " +
           figure_text(a.tonight);
  }
  return out + "</td>";
}

std::string context_differences_html(const loaded_night& baseline, const loaded_night& tonight) {
  std::string out = "<h3>Run context differences</h3>\n";
  for (const auto* night : {&baseline, &tonight})
    if (night->info.run_context.empty())
      return out +
             "<p class=\"muted\" id=\"context-diff\">Not known: " + escape_xml(night->info.path) +
             " has no run_context.json.</p>\n";
  std::vector<context_difference> differences;
  try {
    const auto a = parse_json(baseline.info.run_context, baseline.info.path + "/run_context.json");
    const auto b = parse_json(tonight.info.run_context, tonight.info.path + "/run_context.json");
    if (!a.IsObject() || !b.IsObject())
      throw std::runtime_error("run_context.json is not an object");
    differences = run_context_differences(a, b);
  } catch (const std::runtime_error& e) {
    return out + "<p class=\"muted\" id=\"context-diff\">Not known: " + escape_xml(e.what()) +
           "</p>\n";
  }
  if (differences.empty())
    return out + "<p id=\"context-diff\">The same in both nights (apart from when they started and "
                 "what ran before).</p>\n";
  out += "<p class=\"note\">A slowdown that came with another thread setting, CPU affinity or "
         "torch build shows here before the code is blamed.</p>\n<table id=\"context-diff\">\n"
         "<thead><tr><th>Field</th><th>Baseline night</th><th>Tonight</th></tr></thead>\n<tbody>\n";
  for (const auto& d : differences)
    out += "<tr><th scope=\"row\"><code>" + escape_xml(d.field) + "</code></th><td>" +
           escape_xml(d.a) + "</td><td>" + escape_xml(d.b) + "</td></tr>\n";
  return out + "</tbody>\n</table>\n";
}

} // namespace

std::vector<night_comparison_row> compare_nights(const loaded_night& baseline,
                                                 const loaded_night& tonight,
                                                 const gate_options& options) {
  std::map<std::string, night_comparison_row> rows;
  const auto add = [&](const night_config& c, bool is_tonight) {
    auto& row = rows[c.config];
    row.config = c.config;
    row.model = c.model;
    row.test = c.test;
    row.backend = c.backend;
    row.batch_size = c.batch_size;
    (is_tonight ? row.tonight : row.baseline) = c;
  };
  for (const auto& c : baseline.configs)
    add(c, false);
  for (const auto& c : tonight.configs)
    add(c, true);

  std::vector<night_comparison_row> out;
  for (auto& [config, row] : rows) {
    if (row.baseline)
      row.baseline_ms = per_iter_ms(*row.baseline);
    if (row.tonight)
      row.tonight_ms = per_iter_ms(*row.tonight);
    std::vector<night_state> references;
    if (row.baseline)
      references.push_back(row.baseline->state);
    row.verdict = judge_config(row.tonight ? std::optional(row.tonight->state) : std::nullopt,
                               references, options, /*single_baseline=*/true);
    if (row.baseline_ms && row.tonight_ms) {
      const auto a = paired_list_of(record_json(*row.baseline));
      const auto b = paired_list_of(record_json(*row.tonight));
      std::optional<median_interval> paired;
      if (!a.baseline.empty() && a.baseline == b.baseline)
        paired = bootstrap_ratio_of_medians(a.speedups, b.speedups);
      if (paired) {
        row.ratio = paired;
        row.kind = ratio_kind::paired;
      } else {
        row.ratio =
            bootstrap_ratio_of_medians(row.tonight->counted_repeats, row.baseline->counted_repeats);
        row.kind = ratio_kind::unpaired;
      }
    }
    row.accuracy = accuracy_changes(row.baseline, row.tonight);
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    const auto key = [](const night_comparison_row& r) {
      return std::make_tuple(lower(r.model), r.model, r.test, r.backend, r.config);
    };
    return key(x) < key(y);
  });
  return out;
}

html_section render_comparison_section(const std::vector<night_comparison_row>& rows,
                                       const loaded_night& baseline, const loaded_night& tonight) {
  html_section section{"comparison", "Comparison with the baseline night", ""};
  std::string& out = section.html;
  out = "<section id=\"comparison\">\n<h2>Comparison with the baseline night</h2>\n";
  out += "<table class=\"kv\"><tr><th>Baseline night</th><td>" + escape_xml(baseline.info.path) +
         "</td></tr><tr><th>Tonight</th><td>" + escape_xml(tonight.info.path) +
         "</td></tr></table>\n";
  std::map<std::string, size_t> counts;
  for (const auto& r : rows)
    ++counts[gate_verdict_name(r.verdict.result)];
  std::string summary;
  for (const auto& [name, n] : counts)
    summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  out += "<p id=\"comparison-counts\">" + std::to_string(rows.size()) +
         (rows.size() == 1 ? " config: " : " configs: ") + escape_xml(summary) + "</p>\n";
  out += "<p class=\"note\">Verdicts are the regression gate's single-night rule, as <code>"
         "regression_gate check --baseline BASELINE TONIGHT --no-confirm</code> gives them: "
         "SLOWER/FASTER when tonight's and the baseline's 95% intervals are disjoint and the "
         "medians differ by more than " +
         fixed(gate_options{}.baseline_min_change * 100, 0) +
         "%; BROKEN/FIXED on an error or a verification PASS &#8596; failure; ACCURACY_DRIFT when "
         "an error figure grew beyond " +
         fixed(gate_options{}.accuracy_margin, 0) +
         "x the baseline's. Ratio: tonight's time / the baseline's (&gt; 1: slower), coloured only "
         "when its 95% interval excludes 1; a row is coloured when its verdict is a regression "
         "(red) or an improvement (green).</p>\n";
  out += context_differences_html(baseline, tonight);
  out += "<h3>Per config</h3>\n<div class=\"scroll\"><table id=\"comparison-table\">\n<thead><tr>"
         "<th>Model</th><th>Test</th><th>Backend</th><th>Batch</th>"
         "<th>Baseline ms<br/><span class=\"kind\">median [95%]</span></th>"
         "<th>Tonight ms<br/><span class=\"kind\">median [95%]</span></th>"
         "<th>Ratio<br/><span class=\"kind\">tonight / baseline [95%]</span></th>"
         "<th>Verdict</th><th>Why</th><th>Verification</th><th>Accuracy<br/><span class=\"kind\">"
         "baseline → tonight</span></th></tr></thead>\n<tbody>\n";
  for (const auto& r : rows) {
    const char* name = gate_verdict_name(r.verdict.result);
    const std::string cls = is_regression(r.verdict.result) ? " class=\"regression\""
                            : improvement(r.verdict.result) ? " class=\"improved\""
                                                            : "";
    out += "<tr" + cls + " data-config=\"" + escape_xml(r.config) + "\" data-verdict=\"" + name +
           "\"><th scope=\"row\">" + escape_xml(r.model) + "</th><td>" + escape_xml(r.test) +
           "</td><td>" + escape_xml(r.backend) + "</td><td>" + escape_xml(r.batch_size) + "</td>" +
           ms_cell(r.baseline_ms, r.baseline) + ms_cell(r.tonight_ms, r.tonight) + ratio_cell(r) +
           "<td class=\"verdict" +
           (is_regression(r.verdict.result) ? " fail"
            : improvement(r.verdict.result) ? " pass"
                                            : "") +
           "\">" + name + "</td><td class=\"reason\">" + escape_xml(r.verdict.reason) +
           "</td><td>" + code_of(r.baseline) + " → " + code_of(r.tonight) + "</td>" +
           accuracy_cell(r) + "</tr>\n";
  }
  out += "</tbody>\n</table></div>\n</section>\n";
  return section;
}

} // namespace benchmatrix
