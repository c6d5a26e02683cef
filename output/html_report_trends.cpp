#include "output/html_report_trends.hpp"

#include "core/median_interval.hpp"
#include "output/html_text.hpp"
#include "output/svg_chart.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

namespace benchmatrix {

namespace {

using svg::escape_xml;
using html::anchor;
using html::lower;

std::string utc_text(double seconds) {
  return seconds > 0 ? html::utc_text(seconds) : "unknown";
}

/// A config's series name within its model's chart: test/backend/bs<N>, plus the accelerator
/// when the model's configs run on more than one.
std::string series_name(const night_config& c, bool with_accelerator) {
  std::string name = c.test + "/" + c.backend + "/bs" + c.batch_size;
  if (with_accelerator)
    name += "/" + c.accelerator + ":" + c.accelerator_model;
  return name;
}

struct flagged_point {
  size_t position = 0; // 1-based among the shown nights
  const night_info* night = nullptr;
  std::string config;
  config_verdict verdict;
};

} // namespace

std::vector<loaded_night> load_trend_nights(const night_history& history, size_t shown,
                                            const gate_options& options) {
  auto infos = history.nights();
  const size_t wanted = shown == 0 ? infos.size() : shown + options.history_nights;
  if (infos.size() > wanted)
    infos.erase(infos.begin(), infos.end() - wanted);
  return history.loaded(std::move(infos));
}

html_section render_trends_section(const std::vector<loaded_night>& nights, size_t shown,
                                   const std::string& source, const gate_options& options) {
  html_section section{"trends", "Trends across nights", ""};
  std::string& out = section.html;
  out = "<section id=\"trends\">\n<h2>Trends across nights</h2>\n";
  if (nights.empty()) {
    out += "<p class=\"muted\" id=\"no-nights\">The history " + escape_xml(source) +
           " holds no nights (store them with <code>regression_gate import --db DB DIR...</code>)."
           "</p>\n</section>\n";
    return section;
  }
  const size_t first = shown == 0 || shown >= nights.size() ? 0 : nights.size() - shown;
  const size_t count = nights.size() - first;

  // Per model: its configs (in first-seen order) and, per config, a point per shown night.
  struct config_series {
    std::string config;
    const night_config* sample = nullptr;
    std::vector<svg::line_point> points;
  };
  std::map<std::string, std::vector<config_series>> models; // key: lower-cased model
  std::map<std::string, std::string> model_names;
  std::vector<flagged_point> flagged;
  std::vector<size_t> flags_per_night(count, 0);
  for (size_t n = first; n < nights.size(); ++n) {
    const size_t position = n - first + 1;
    const auto& night = nights[n];
    const size_t history_start = n > options.history_nights ? n - options.history_nights : 0;
    for (const auto& c : night.configs) {
      // The gate's first-pass verdict of this night against the nights before it.
      std::vector<night_state> references;
      for (size_t h = history_start; h < n; ++h)
        for (const auto& r : nights[h].configs)
          if (r.config == c.config)
            references.push_back(r.state);
      const auto verdict = judge_config(c.state, references, options);
      const bool is_flagged = is_regression(verdict.result);

      auto& series_list = models[lower(c.model)];
      model_names.emplace(lower(c.model), c.model);
      auto it = std::find_if(series_list.begin(), series_list.end(),
                             [&](const config_series& s) { return s.config == c.config; });
      if (it == series_list.end()) {
        series_list.push_back({c.config, &c, {}});
        it = series_list.end() - 1;
      }
      svg::line_point p;
      p.x = static_cast<double>(position);
      p.flagged = is_flagged;
      std::string figure = c.state.result == night_state::outcome::ran ? "no timings"
                           : c.state.result == night_state::outcome::skipped
                               ? "SKIP: " + c.state.detail
                               : "error: " + c.state.detail;
      if (c.state.result == night_state::outcome::ran)
        if (const auto ms = bootstrap_median(c.counted_repeats)) {
          p.y = ms->median * 1e3;
          p.low = ms->low * 1e3;
          p.high = ms->high * 1e3;
          figure = format_ms(p.y) + " ms [" + format_ms(p.low) + "–" + format_ms(p.high) + "]";
        }
      p.tooltip = "night " + std::to_string(position) + " (history night " +
                  std::to_string(night.info.id) + ", " + utc_text(night.info.started) +
                  "): " + figure + "; gate: " + gate_verdict_name(verdict.result) +
                  (verdict.reason.empty() ? "" : " (" + verdict.reason + ")");
      it->points.push_back(p);
      if (is_flagged) {
        flagged.push_back({position, &night.info, c.config, verdict});
        ++flags_per_night[position - 1];
      }
    }
  }

  out += "<p class=\"note\">" + std::to_string(count) + (count == 1 ? " night" : " nights") +
         " of " + escape_xml(source) +
         ", oldest first. Each point is a night's per-iteration median (ms) of its counted repeats "
         "(repeat 0 left out) with its bootstrap 95% interval. A red ring marks a night the "
         "regression gate flags on its first pass (SLOWER, BROKEN or ACCURACY_DRIFT against the " +
         std::to_string(options.history_nights) +
         " nights before it, as <code>regression_gate check --db DB NIGHT --no-confirm</code> "
         "judges; a confirmation run may clear it).</p>\n";
  out += "<table id=\"trend-nights\">\n<thead><tr><th>Night</th><th>History id</th><th>Started</th>"
         "<th>Host</th><th>Directory</th><th>Flagged configs</th></tr></thead>\n<tbody>\n";
  for (size_t n = first; n < nights.size(); ++n) {
    const auto& info = nights[n].info;
    const size_t f = flags_per_night[n - first];
    out += "<tr" + std::string(f ? " class=\"regression\"" : "") + "><td class=\"num\">" +
           std::to_string(n - first + 1) + "</td><td class=\"num\">" + std::to_string(info.id) +
           "</td><td>" + utc_text(info.started) + "</td><td>" + escape_xml(info.host) +
           "</td><td>" + escape_xml(info.path) + "</td><td class=\"num\">" + std::to_string(f) +
           "</td></tr>\n";
  }
  out += "</tbody>\n</table>\n";

  std::vector<std::string> order;
  for (const auto& [key, series] : models)
    order.push_back(key); // std::map: case-insensitive
  for (const auto& key : order) {
    const auto& series_list = models[key];
    std::set<std::string> accelerators;
    for (const auto& s : series_list)
      accelerators.insert(s.sample->accelerator + ":" + s.sample->accelerator_model);
    svg::line_chart chart;
    chart.frame.title = model_names[key] + ": per-iteration median by night";
    chart.frame.x_label = "night (1 = oldest shown)";
    chart.frame.y_label = "per-iteration time (ms)";
    chart.frame.width_in = 9.0;
    chart.frame.height_in = 4.0;
    chart.legend_outside = true;  // the latest nights, at the right, are the ones looked at
    for (size_t i = 0; i < series_list.size(); ++i) {
      svg::line_series s;
      s.name = series_name(*series_list[i].sample, accelerators.size() > 1);
      s.points = series_list[i].points;
      s.marker = static_cast<svg::marker_shape>(i % 6);
      chart.series.push_back(std::move(s));
    }
    std::string svg = svg::render_line_chart(chart);
    if (svg.rfind("<?xml", 0) == 0)
      svg.erase(0, svg.find('\n') + 1);
    out += "<figure class=\"chart trend\" id=\"trend-" + anchor(model_names[key]) +
           "\" data-model=\"" + escape_xml(model_names[key]) + "\">" + svg + "</figure>\n";
  }

  out += "<h3>Flagged nights</h3>\n";
  if (flagged.empty()) {
    out += "<p id=\"trend-flags\">No night is flagged.</p>\n";
  } else {
    out += "<table id=\"trend-flags\">\n<thead><tr><th>Night</th><th>Config</th><th>Verdict</th>"
           "<th>Why</th></tr></thead>\n<tbody>\n";
    for (const auto& f : flagged)
      out += "<tr class=\"regression\" data-night=\"" + std::to_string(f.position) +
             "\" data-config=\"" + escape_xml(f.config) + "\"><td class=\"num\">" +
             std::to_string(f.position) + "</td><td><code>" + escape_xml(f.config) +
             "</code></td><td class=\"verdict fail\">" + gate_verdict_name(f.verdict.result) +
             "</td><td class=\"reason\">" + escape_xml(f.verdict.reason) + "</td></tr>\n";
    out += "</tbody>\n</table>\n";
  }
  out += "</section>\n";
  return section;
}

} // namespace benchmatrix
