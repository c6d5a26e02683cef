#include "output/memory_section.hpp"

#include "core/python_json.hpp"
#include "output/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace benchmatrix {
namespace {

std::string ratio_text(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", ratio);
  return text;
}

std::string ratio_cell(double ratio) {
  const bool low = ratio < low_compression_ratio;
  return std::string("<td class=\"num") + (low ? " slower" : "") + "\"" +
         (low ? " title=\"below " + python_float_repr(low_compression_ratio) + "\"" : "") + ">" +
         ratio_text(ratio) + "</td>";
}

double geomean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += std::log(v);
  return std::exp(sum / static_cast<double>(values.size()));
}

}  // namespace

std::string memory_section_html(const std::vector<memory_cell_input>& records,
                                const std::vector<std::string>& backends,
                                const std::string& baseline) {
  // test → (suite, model) → backend → figure (a later record replaces an earlier one)
  std::map<std::string, std::map<std::pair<std::string, std::string>,
                                 std::map<std::string, peak_memory_figure>>>
      by_test;
  for (const auto& r : records)
    if (r.peak_memory) by_test[r.test][{r.suite, r.model}][r.backend] = *r.peak_memory;
  if (by_test.empty()) return "";
  std::string out = "<section id=\"memory\">\n<h2>Peak memory</h2>\n";
  out += "<p class=\"note\">The memory pass after the timed repeats: median over the counted "
         "repeats of the device's peak allocated bytes (CUDA caching allocator; host peak RSS "
         "for CPU configs, marked RSS). Compression: " + svg::escape_xml(baseline) +
         " peak / backend peak (&gt; 1: the backend needs less), red below " +
         python_float_repr(low_compression_ratio) + " as PyTorch's dashboard flags it; GEOMEAN "
         "rows per suite. CUDA graphs: allocated does not see a replay's intermediates (they live "
         "in the graph's pool, counted as reserved), so their ratio overstates the saving.</p>\n";
  for (const auto& [test, rows] : by_test) {
    std::vector<std::string> shown;  // backends with a figure in this test, in page order
    for (const auto& b : backends)
      if (std::any_of(rows.begin(), rows.end(),
                      [&](const auto& row) { return row.second.count(b) != 0; }))
        shown.push_back(b);
    std::vector<std::string> compared;
    for (const auto& b : shown)
      if (b != baseline) compared.push_back(b);
    out += "<h3>" + svg::escape_xml(test) + "</h3>\n<div class=\"scroll\"><table>\n<thead><tr>"
           "<th>suite</th><th>model</th>";
    for (const auto& b : shown) out += "<th class=\"backend\">" + svg::escape_xml(b) + " peak</th>";
    for (const auto& b : compared)
      out += "<th class=\"backend\">" + svg::escape_xml(b) + " compression</th>";
    out += "</tr></thead>\n<tbody>\n";
    std::map<std::string, std::map<std::string, std::vector<double>>> ratios;  // suite → backend
    std::map<std::string, std::vector<double>> all_ratios;
    std::vector<std::pair<std::string, std::string>> keys;
    for (const auto& [key, cells] : rows) keys.push_back(key);
    std::stable_sort(keys.begin(), keys.end(), [](const auto& x, const auto& y) {
      auto lower = [](std::string s) {
        for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
      };
      return std::make_tuple(x.first, lower(x.second)) < std::make_tuple(y.first, lower(y.second));
    });
    for (const auto& key : keys) {
      const auto& cells = rows.at(key);
      out += "<tr><td>" + svg::escape_xml(key.first) + "</td><th scope=\"row\">" +
             svg::escape_xml(key.second) + "</th>";
      for (const auto& b : shown) {
        const auto it = cells.find(b);
        if (it == cells.end()) {
          out += "<td></td>";
          continue;
        }
        const auto& f = it->second;
        out += "<td class=\"num\" title=\"" + std::string(peak_memory_kind_name(f.kind)) + ", " +
               std::to_string(static_cast<long long>(f.bytes.median)) + " bytes, repeats " +
               bytes_text(f.bytes.min) + " to " + bytes_text(f.bytes.max) + "\">" +
               bytes_text(f.bytes.median) +
               (f.kind == peak_memory_kind::host_rss ? " <span class=\"muted\">RSS</span>" : "") +
               "</td>";
      }
      const auto base = cells.find(baseline);
      for (const auto& b : compared) {
        const auto it = cells.find(b);
        std::optional<double> ratio;
        if (base != cells.end() && it != cells.end())
          ratio = compression_ratio(base->second, it->second);
        if (!ratio) {
          out += "<td></td>";
          continue;
        }
        ratios[key.first][b].push_back(*ratio);
        all_ratios[b].push_back(*ratio);
        out += ratio_cell(*ratio);
      }
      out += "</tr>\n";
    }
    const auto geomean_row = [&](const std::string& label,
                                 std::map<std::string, std::vector<double>>& by_backend) {
      std::string row = "<tr class=\"geomean\"><td>" + svg::escape_xml(label) +
                        "</td><th scope=\"row\">GEOMEAN</th>";
      for (size_t i = 0; i < shown.size(); ++i) row += "<td></td>";
      for (const auto& b : compared) {
        const auto& v = by_backend[b];
        row += v.empty() ? "<td></td>" : ratio_cell(geomean(v));
      }
      return row + "</tr>\n";
    };
    for (auto& [suite, by_backend] : ratios) out += geomean_row(suite, by_backend);
    if (ratios.size() > 1) out += geomean_row("all suites", all_ratios);
    out += "</tbody>\n</table></div>\n";
  }
  return out + "</section>\n";
}

}  // namespace benchmatrix
