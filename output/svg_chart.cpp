#include "output/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

namespace benchmatrix::svg {

namespace {

constexpr double pixels_per_inch = 96;
constexpr double font_size = 12;        // px: tick and legend text
constexpr double title_font_size = 14;  // px
constexpr double char_width = 0.6;      // average glyph width per px of font size (estimate)
constexpr double marker_radius = 3.5;   // px
constexpr double cap_half_width = 3;    // px: error bar caps, as matplotlib's capsize=3
// matplotlib's default color cycle (tab10).
const char* const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
const char* const reference_color = "#d3d3d3";  // matplotlib's lightgray

const char* color_of(size_t i) { return palette[i % (sizeof palette / sizeof *palette)]; }

/// A coordinate or size: 2 decimals at most, no trailing zeros.
std::string num(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", v);
  std::string s = text;
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string tick_text(double v, double step) {
  if (std::fabs(v) < std::fabs(step) * 1e-9) v = 0;  // -1e-17 is 0
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

double text_width(const std::string& text, double size) {
  size_t glyphs = 0;  // UTF-8 code points
  for (unsigned char c : text) glyphs += (c & 0xC0) != 0x80;
  return static_cast<double>(glyphs) * size * char_width;
}

/// A closed value range with the linear map onto a pixel span.
struct scale {
  double low = 0, high = 1;     // values
  double from = 0, to = 1;      // pixels (to < from for a y axis)
  [[nodiscard]] double operator()(double v) const {
    return from + (v - low) / (high - low) * (to - from);
  }
};

/// [low, high] of finite values, widened by `pad` of its span (or by 1 when it is a point).
std::pair<double, double> padded_range(const std::vector<double>& values, double pad,
                                       double point_pad = 1) {
  double low = INFINITY, high = -INFINITY;
  for (double v : values)
    if (std::isfinite(v)) low = std::min(low, v), high = std::max(high, v);
  if (!std::isfinite(low)) return {0, 1};
  if (high - low <= 0) return {low - point_pad, high + point_pad};
  return {low - (high - low) * pad, high + (high - low) * pad};
}

/// The document: the svg element, a white background, the title, axis labels.
class document {
public:
  explicit document(const chart_frame& frame)
      : m_width(frame.width_in * pixels_per_inch), m_height(frame.height_in * pixels_per_inch) {
    m_out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << num(m_width)
          << "\" height=\"" << num(m_height) << "\" viewBox=\"0 0 " << num(m_width) << " "
          << num(m_height) << "\" font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" "
          << "font-size=\"" << num(font_size) << "\">\n"
          << "<rect x=\"0\" y=\"0\" width=\"" << num(m_width) << "\" height=\"" << num(m_height)
          << "\" fill=\"white\"/>\n";
    const auto title = lines_of(frame.title);
    for (size_t i = 0; i < title.size(); ++i)
      text(m_width / 2, 22 + static_cast<double>(i) * (title_font_size + 4), title[i], "middle",
           "font-size=\"" + num(title_font_size) + "\"" + (i == 0 ? " font-weight=\"bold\"" : ""));
    m_title_height = 12 + static_cast<double>(title.size()) * (title_font_size + 4);
  }

  [[nodiscard]] double width() const { return m_width; }
  [[nodiscard]] double height() const { return m_height; }
  [[nodiscard]] double title_height() const { return m_title_height; }

  void raw(const std::string& element) { m_out << element << "\n"; }

  void text(double x, double y, const std::string& content, const char* anchor,
            const std::string& attributes = "") {
    m_out << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" text-anchor=\"" << anchor
          << "\"" << (attributes.empty() ? "" : " " + attributes) << ">" << escape_xml(content)
          << "</text>\n";
  }

  void line(double x1, double y1, double x2, double y2, const std::string& stroke,
            double stroke_width, const std::string& extra = "") {
    m_out << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2)
          << "\" y2=\"" << num(y2) << "\" stroke=\"" << stroke << "\" stroke-width=\""
          << num(stroke_width) << "\"" << (extra.empty() ? "" : " " + extra) << "/>\n";
  }

  /// The plot frame and axis labels around the area [left, right] x [top, bottom].
  void axes(double left, double top, double right, double bottom, const chart_frame& frame) {
    m_out << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\""
          << num(right - left) << "\" height=\"" << num(bottom - top)
          << "\" fill=\"none\" stroke=\"black\" stroke-width=\"0.8\"/>\n";
    if (!frame.x_label.empty())
      text((left + right) / 2, m_height - 10, frame.x_label, "middle");
    if (!frame.y_label.empty())
      m_out << "<text transform=\"translate(16," << num((top + bottom) / 2)
            << ") rotate(-90)\" text-anchor=\"middle\">" << escape_xml(frame.y_label)
            << "</text>\n";
  }

  /// A legend box in the top-right corner of the plot area; `sample(i, x, y)` draws entry i's key.
  template <typename Sample>
  void legend(const std::vector<std::string>& names, double right, double top, Sample sample) {
    if (names.empty()) return;
    double widest = 0;
    for (const auto& n : names) widest = std::max(widest, text_width(n, font_size));
    const double row = font_size + 6, w = widest + 46, h = row * static_cast<double>(names.size()) + 8;
    const double x = right - w - 8, y = top + 8;
    m_out << "<g class=\"legend\">\n<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\""
          << num(w) << "\" height=\"" << num(h)
          << "\" fill=\"white\" fill-opacity=\"0.8\" stroke=\"#cccccc\" rx=\"3\"/>\n";
    for (size_t i = 0; i < names.size(); ++i) {
      const double cy = y + 4 + row * (static_cast<double>(i) + 0.5);
      sample(i, x + 8, cy);
      text(x + 38, cy + font_size * 0.35, names[i], "start");
    }
    m_out << "</g>\n";
  }

  std::string finish() {
    m_out << "</svg>\n";
    return m_out.str();
  }

private:
  double m_width, m_height, m_title_height = 0;
  std::ostringstream m_out;
};

/// The ticks and labels of a vertical value axis at x = `left` (about 7 "nice" ticks over y's
/// range) and, when given, a horizontal reference line from `left` to `right`.
void draw_value_axis(document& doc, const scale& y, double left, double right,
                     const std::optional<double>& reference) {
  const auto ticks = nice_ticks(y.low, y.high, 7);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    if (t < y.low || t > y.high) continue;
    doc.line(left - 4, y(t), left, y(t), "black", 0.8);
    doc.text(left - 7, y(t) + font_size * 0.35, tick_text(t, step), "end");
  }
  if (reference)
    doc.line(left, y(*reference), right, y(*reference), reference_color, 1.2, "class=\"reference\"");
}

std::string dash_array(line_dash dash) {
  switch (dash) {
  case line_dash::dotted: return " stroke-dasharray=\"1.5,2.5\"";
  case line_dash::dashed: return " stroke-dasharray=\"6,3\"";
  case line_dash::dash_dot: return " stroke-dasharray=\"6,2.5,1.5,2.5\"";
  case line_dash::solid: break;
  }
  return "";
}

std::string marker(marker_shape shape, double x, double y, const char* color) {
  const double r = marker_radius;
  const std::string fill = std::string(" fill=\"") + color + "\" stroke=\"" + color + "\"";
  auto polygon = [&](std::initializer_list<std::pair<double, double>> corners) {
    std::string points;
    for (const auto& [dx, dy] : corners) {
      if (!points.empty()) points += ' ';
      points += num(x + dx);
      points += ',';
      points += num(y + dy);
    }
    return "<polygon points=\"" + points + "\"" + fill + "/>";
  };
  switch (shape) {
  case marker_shape::diamond: return polygon({{0, -r}, {r, 0}, {0, r}, {-r, 0}});
  case marker_shape::square: return polygon({{-r, -r}, {r, -r}, {r, r}, {-r, r}});
  case marker_shape::triangle: return polygon({{0, r}, {r, -r}, {-r, -r}});  // pointing down
  case marker_shape::cross:
    return "<path d=\"M" + num(x - r) + "," + num(y - r) + "L" + num(x + r) + "," + num(y + r) +
           "M" + num(x - r) + "," + num(y + r) + "L" + num(x + r) + "," + num(y - r) +
           "\" stroke=\"" + color + "\" stroke-width=\"1.5\" fill=\"none\"/>";
  case marker_shape::plus:
    return "<path d=\"M" + num(x - r) + "," + num(y) + "L" + num(x + r) + "," + num(y) + "M" +
           num(x) + "," + num(y - r) + "L" + num(x) + "," + num(y + r) + "\" stroke=\"" + color +
           "\" stroke-width=\"1.5\" fill=\"none\"/>";
  case marker_shape::circle: break;
  }
  return "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"" + num(r) + "\"" + fill + "/>";
}

// --- date ticks ---------------------------------------------------------------------------------

std::string utc_text(double seconds, const char* format) {
  const auto t = static_cast<std::time_t>(std::floor(seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[64];
  std::strftime(text, sizeof text, format, &tm);
  return text;
}

/// Tick positions (seconds since the epoch, multiples of a calendar-friendly step) and the label
/// format that suits the step.
std::pair<std::vector<double>, const char*> date_ticks(double low, double high) {
  static const double steps[] = {1,     2,     5,     10,     15,     30,      60,      120,
                                 300,   600,   900,   1800,   3600,   7200,    10800,   21600,
                                 43200, 86400, 172800, 604800, 1209600, 2592000, 7776000, 31536000};
  double step = steps[sizeof steps / sizeof *steps - 1];
  for (double s : steps)
    if ((high - low) / s <= 7) {
      step = s;
      break;
    }
  std::vector<double> ticks;
  for (double t = std::ceil(low / step) * step; t <= high + 1e-9; t += step) ticks.push_back(t);
  const char* format = step >= 86400           ? "%Y-%m-%d"
                       : high - low >= 86400   ? "%m-%d %H:%M"
                       : step >= 60            ? "%H:%M"
                                               : "%H:%M:%S";
  return {ticks, format};
}

}  // namespace

const char* palette_color(size_t i) { return color_of(i); }

std::string escape_xml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') continue;  // not allowed in XML 1.0
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    default: out += c;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double low, double high, int target_count) {
  if (!(high > low) || !std::isfinite(low) || !std::isfinite(high)) return {low};
  const double raw = (high - low) / std::max(1, target_count);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  std::vector<double> ticks;
  const double epsilon = step * 1e-9;
  for (double k = std::ceil((low - epsilon) / step); k * step <= high + epsilon; k += 1)
    ticks.push_back(k * step);
  return ticks;
}

std::string render_line_chart(const line_chart& chart) {
  document doc(chart.frame);
  double legend_width = 0;  // the legend box's, as document::legend draws it
  for (const auto& s : chart.series)
    legend_width = std::max(legend_width, text_width(s.name, font_size) + 46);
  const double left = 72,
               right = doc.width() - 20 - (chart.legend_outside ? legend_width + 12 : 0),
               top = doc.title_height() + 8, bottom = doc.height() - 48;
  std::vector<double> xs, ys;
  for (const auto& s : chart.series)
    for (const auto& p : s.points) {
      if (!std::isfinite(p.y)) continue;
      xs.push_back(p.x);
      const double e = std::isfinite(p.error) ? p.error : 0;
      ys.push_back(p.y - e);
      ys.push_back(p.y + e);
      if (std::isfinite(p.low) && std::isfinite(p.high)) {
        ys.push_back(p.low);
        ys.push_back(p.high);
      }
    }
  if (chart.reference_y) ys.push_back(*chart.reference_y);
  const bool dates = chart.x_axis == x_axis_kind::utc_dates;
  const auto [x_low, x_high] = padded_range(xs, 0.05, dates ? 43200 : 1);
  const auto [y_low, y_high] = padded_range(ys, 0.08, 0.5);
  const scale x{x_low, x_high, left, right};
  const scale y{y_low, y_high, bottom, top};

  // grid ticks
  const auto [x_ticks, date_format] =
      dates ? date_ticks(x_low, x_high) : std::make_pair(nice_ticks(x_low, x_high, 8), "");
  const double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1;
  for (double t : x_ticks) {
    if (t < x_low || t > x_high) continue;
    doc.line(x(t), bottom, x(t), bottom + 4, "black", 0.8);
    doc.text(x(t), bottom + 18, dates ? utc_text(t, date_format) : tick_text(t, x_step), "middle");
  }
  draw_value_axis(doc, y, left, right, chart.reference_y);

  std::vector<std::string> names;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const auto& s = chart.series[i];
    const char* color = color_of(i);
    names.push_back(s.name);
    doc.raw("<g class=\"series\" data-name=\"" + escape_xml(s.name) + "\">");
    std::string path;
    bool pen_down = false;
    for (const auto& p : s.points) {
      if (!std::isfinite(p.y)) {
        pen_down = false;
        continue;
      }
      path += pen_down ? 'L' : 'M';
      path += num(x(p.x)) + "," + num(y(p.y));
      pen_down = true;
    }
    if (!path.empty())
      doc.raw("<path d=\"" + path + "\" fill=\"none\" stroke=\"" + color +
              "\" stroke-width=\"1.5\"" + dash_array(s.dash) + "/>");
    for (size_t j = 0; j < s.points.size(); ++j) {
      const auto& p = s.points[j];
      if (!std::isfinite(p.y)) continue;
      const double px = x(p.x), py = y(p.y);
      doc.raw(std::string("<g class=\"point") + (p.flagged ? " flagged" : "") + "\">");
      if (!p.tooltip.empty()) doc.raw("<title>" + escape_xml(p.tooltip) + "</title>");
      const bool interval = std::isfinite(p.low) && std::isfinite(p.high) && p.high > p.low;
      if (interval || (std::isfinite(p.error) && p.error > 0)) {
        const double y1 = interval ? y(p.low) : y(p.y - p.error),
                     y2 = interval ? y(p.high) : y(p.y + p.error);
        doc.line(px, y1, px, y2, color, 0.5, "class=\"error-bar\"");
        doc.line(px - cap_half_width, y1, px + cap_half_width, y1, color, 0.5);
        doc.line(px - cap_half_width, y2, px + cap_half_width, y2, color, 0.5);
      }
      doc.raw(marker(s.marker, px, py, color));
      if (p.flagged)
        doc.raw("<circle class=\"flag\" cx=\"" + num(px) + "\" cy=\"" + num(py) + "\" r=\"" +
                num(marker_radius * 2.2) + "\" fill=\"none\" stroke=\"#d62728\" "
                "stroke-width=\"2\"/>");
      doc.raw("</g>");
      if (s.annotate && !p.label.empty())
        doc.raw("<text transform=\"translate(" + num(px) + "," + num(py) +
                ") rotate(-45)\" font-size=\"7\" fill-opacity=\"0.5\" text-anchor=\"" +
                (i % 2 == 0 ? "start" : "end") + "\">" + escape_xml(p.label) + "</text>");
    }
    doc.raw("</g>");
  }
  doc.axes(left, top, right, bottom, chart.frame);
  const double legend_right = chart.legend_outside ? right + 12 + legend_width + 8 : right;
  doc.legend(names, legend_right, chart.legend_outside ? top - 8 : top,
             [&](size_t i, double lx, double ly) {
    doc.raw("<path d=\"M" + num(lx) + "," + num(ly) + "L" + num(lx + 22) + "," + num(ly) +
            "\" stroke=\"" + color_of(i) + "\" stroke-width=\"1.5\"" +
            dash_array(chart.series[i].dash) + "/>");
    doc.raw(marker(chart.series[i].marker, lx + 11, ly, color_of(i)));
  });
  return doc.finish();
}

std::string render_bar_chart(const bar_chart& chart) {
  document doc(chart.frame);
  double widest_label = 0;
  for (const auto& c : chart.categories) widest_label = std::max(widest_label, text_width(c, font_size));
  double legend_width = 0;  // the legend box's, as document::legend draws it
  for (const auto& s : chart.series) legend_width = std::max(legend_width, text_width(s.name, font_size) + 46);
  const double left = std::clamp(widest_label + 40, 72.0, doc.width() * 0.45),
               right = doc.width() - 20 - (chart.legend_outside ? legend_width + 12 : 0),
               top = doc.title_height() + 8, bottom = doc.height() - 48;
  std::vector<double> extents = {0};
  for (const auto& s : chart.series)
    for (size_t i = 0; i < s.values.size(); ++i) {
      const double e = i < s.errors.size() && std::isfinite(s.errors[i]) ? s.errors[i] : 0;
      if (std::isfinite(s.values[i])) extents.push_back(s.values[i] + e);
      if (i < s.highs.size() && std::isfinite(s.highs[i])) extents.push_back(s.highs[i]);
    }
  if (chart.reference_x) extents.push_back(*chart.reference_x);
  const double high = *std::max_element(extents.begin(), extents.end()) * 1.12;
  const scale x{0, high > 0 ? high : 1, left, right};
  const auto ticks = nice_ticks(0, x.high, 8);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    if (t > x.high) continue;
    doc.line(x(t), bottom, x(t), bottom + 4, "black", 0.8);
    doc.text(x(t), bottom + 18, tick_text(t, step), "middle");
  }
  const double n = std::max<double>(1, static_cast<double>(chart.categories.size()));
  const double group = (bottom - top) / n;
  const double bar = group * 0.7 / std::max<double>(1, static_cast<double>(chart.series.size()));
  for (size_t c = 0; c < chart.categories.size(); ++c) {
    const double middle = top + group * (static_cast<double>(c) + 0.5);
    doc.line(left - 4, middle, left, middle, "black", 0.8);
    doc.text(left - 7, middle + font_size * 0.35, chart.categories[c], "end");
  }
  if (chart.reference_x)
    doc.line(x(*chart.reference_x), top, x(*chart.reference_x), bottom, reference_color, 1.2,
             "class=\"reference\"");
  std::vector<std::string> names;
  for (size_t j = 0; j < chart.series.size(); ++j) {
    const auto& s = chart.series[j];
    const std::string color = s.color.empty() ? color_of(j) : escape_xml(s.color);
    names.push_back(s.name);
    doc.raw("<g class=\"series\" data-name=\"" + escape_xml(s.name) + "\">");
    for (size_t c = 0; c < s.values.size() && c < chart.categories.size(); ++c) {
      const double v = s.values[c];
      if (!std::isfinite(v)) continue;
      const double y0 = top + group * (static_cast<double>(c) + 0.15) + bar * static_cast<double>(j);
      const double ym = y0 + bar / 2;
      doc.raw("<rect class=\"bar\" x=\"" + num(x(0)) + "\" y=\"" + num(y0) + "\" width=\"" +
              num(std::max(0.0, x(v) - x(0))) + "\" height=\"" + num(bar) + "\" fill=\"" + color +
              "\"><title>" + escape_xml(chart.categories[c] + ", " + s.name + ": " +
                                        tick_text(v, 1e-12)) +
              "</title></rect>");
      double end = v;
      double from = v, to = v;  // the error bar's ends
      if (c < s.lows.size() && c < s.highs.size() && std::isfinite(s.lows[c]) &&
          std::isfinite(s.highs[c])) {
        from = s.lows[c];
        to = s.highs[c];
      } else if (c < s.errors.size() && std::isfinite(s.errors[c]) && s.errors[c] > 0) {
        from = v - s.errors[c];
        to = v + s.errors[c];
      }
      if (to > from) {
        end = std::max(v, to);
        doc.line(x(from), ym, x(to), ym, "black", 0.8, "class=\"error-bar\"");
        doc.line(x(from), ym - cap_half_width, x(from), ym + cap_half_width, "black", 0.8);
        doc.line(x(to), ym - cap_half_width, x(to), ym + cap_half_width, "black", 0.8);
      }
      if (chart.value_labels) {
        char text[32];
        std::snprintf(text, sizeof text, "%.2f", v);
        doc.text(x(end) + 3, ym + std::min(bar, font_size) * 0.35, text, "start",
                 "font-size=\"" + num(std::min(10.0, std::max(6.0, bar))) + "\"");
      }
    }
    doc.raw("</g>");
  }
  doc.axes(left, top, right, bottom, chart.frame);
  const double legend_right = chart.legend_outside ? right + 12 + legend_width + 8 : right;
  doc.legend(names, legend_right, chart.legend_outside ? top - 8 : top, [&](size_t i, double lx, double ly) {
    const auto& color = chart.series[i].color;
    doc.raw("<rect x=\"" + num(lx) + "\" y=\"" + num(ly - 5) + "\" width=\"22\" height=\"10\" fill=\"" +
            (color.empty() ? std::string(color_of(i)) : escape_xml(color)) + "\"/>");
  });
  return doc.finish();
}

std::string render_distribution_chart(const distribution_chart& chart) {
  document doc(chart.frame);
  const double left = 72, right = doc.width() - 20, top = doc.title_height() + 8;
  double widest = 0;
  for (const auto& g : chart.groups) widest = std::max(widest, text_width(g.label, font_size));
  // labels are rotated when there are many or when the widest does not fit its slot
  const double slot = (right - left) / std::max<double>(1, static_cast<double>(chart.groups.size()));
  const bool rotate = chart.groups.size() > 8 || widest > slot * 0.95;
  const double bottom = doc.height() - (rotate ? std::min(doc.height() * 0.35, widest * 0.75 + 40) : 48);
  std::vector<double> all;
  for (const auto& g : chart.groups)
    for (double v : g.values)
      if (std::isfinite(v)) all.push_back(v);
  if (chart.reference_y) all.push_back(*chart.reference_y);
  const auto [low, high] = padded_range(all, 0.08, 0.5);
  const scale y{low, high, bottom, top};
  draw_value_axis(doc, y, left, right, chart.reference_y);
  for (size_t i = 0; i < chart.groups.size(); ++i) {
    const auto& g = chart.groups[i];
    const double cx = left + slot * (static_cast<double>(i) + 0.5);
    const std::string color = g.color.empty() ? color_of(i) : escape_xml(g.color);
    doc.line(cx, bottom, cx, bottom + 4, "black", 0.8);
    if (rotate)
      doc.raw("<text transform=\"translate(" + num(cx) + "," + num(bottom + 14) +
              ") rotate(-40)\" text-anchor=\"end\">" + escape_xml(g.label) + "</text>");
    else
      doc.text(cx, bottom + 18, g.label, "middle");
    std::vector<double> values;
    for (double v : g.values)
      if (std::isfinite(v)) values.push_back(v);
    if (values.empty()) continue;
    std::sort(values.begin(), values.end());
    auto quantile = [&](double q) {  // linear interpolation, as np.percentile
      const double index = q * static_cast<double>(values.size() - 1);
      const auto lo = static_cast<size_t>(std::floor(index));
      const size_t hi = std::min(lo + 1, values.size() - 1);
      return values[lo] + (values[hi] - values[lo]) * (index - std::floor(index));
    };
    doc.raw("<g class=\"distribution\" data-name=\"" + escape_xml(g.label) + "\">");
    const double half = slot * 0.3;
    if (chart.boxes) {
      const double q1 = quantile(0.25), q2 = quantile(0.5), q3 = quantile(0.75);
      doc.line(cx, y(values.front()), cx, y(q1), "black", 0.8);
      doc.line(cx, y(q3), cx, y(values.back()), "black", 0.8);
      doc.line(cx - half / 2, y(values.front()), cx + half / 2, y(values.front()), "black", 0.8);
      doc.line(cx - half / 2, y(values.back()), cx + half / 2, y(values.back()), "black", 0.8);
      doc.raw("<rect class=\"box\" x=\"" + num(cx - half) + "\" y=\"" + num(y(q3)) +
              "\" width=\"" + num(2 * half) + "\" height=\"" + num(std::max(0.5, y(q1) - y(q3))) +
              "\" fill=\"" + color + "\" fill-opacity=\"0.25\" stroke=\"" + color + "\"/>");
      doc.line(cx - half, y(q2), cx + half, y(q2), color, 2, "class=\"median\"");
    }
    if (chart.points) {
      size_t k = 0;
      for (double v : g.values) {
        if (!std::isfinite(v)) continue;
        // deterministic jitter: the golden-ratio sequence spreads points evenly across the box
        const double jitter = (std::fmod(static_cast<double>(k++) * 0.6180339887, 1.0) - 0.5) * half;
        doc.raw("<circle class=\"point\" cx=\"" + num(cx + jitter) + "\" cy=\"" + num(y(v)) +
                "\" r=\"2.5\" fill=\"" + color + "\" fill-opacity=\"0.6\"/>");
      }
    }
    doc.raw("</g>");
  }
  doc.axes(left, top, right, bottom, chart.frame);
  return doc.finish();
}

}  // namespace benchmatrix::svg
