// Self-contained SVG 1.1 charts (no scripts, no external fonts or styles) for reports: a line or
// error-bar plot over numbers or dates, a horizontal grouped bar chart with error bars, and a
// box-and-strip plot of distributions. Each chart has a title, axis ticks and labels, a legend and
// an optional reference line (1.0 for speedups). Text is XML-escaped; sizes are in inches as
// matplotlib's figsize (rendered at 96 px per inch). Torch-free and independent of any report.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix::svg {

inline constexpr double no_value = std::numeric_limits<double>::quiet_NaN();

/// What every chart has.
struct chart_frame {
  std::string title;         // '\n' separates lines
  std::string x_label;
  std::string y_label;
  double width_in = 9.0;     // inches
  double height_in = 6.75;   // inches
};

enum class line_dash { solid, dotted, dashed, dash_dot };
enum class marker_shape { diamond, circle, square, triangle, cross, plus };

/// One point of a line series; NaN y leaves a gap; NaN error draws no error bar. Each point is
/// drawn as <g class="point"> (class "point flagged" when flagged) holding its marker, its bar and
/// its tooltip.
struct line_point {
  double x = 0;
  double y = no_value;
  double error = no_value;  // symmetric: the bar spans y - error .. y + error
  std::string label;        // written next to the point when the series annotates
  // An interval that need not be symmetric (e.g. a bootstrap interval), drawn instead of `error`
  // where both ends are finite.
  double low = no_value, high = no_value;
  bool flagged = false;     // drawn with a red ring around the marker (e.g. a gate's regression)
  std::string tooltip;      // the point's <title> ("" for none)
};

struct line_series {
  std::string name;  // legend entry
  std::vector<line_point> points;
  line_dash dash = line_dash::solid;
  marker_shape marker = marker_shape::circle;
  bool annotate = false;  // write each point's label, rotated 45°, small and translucent
};

enum class x_axis_kind { numbers, utc_dates };  // utc_dates: x in seconds since the epoch

/// A line (error-bar) plot, e.g. geomean speedup over time or sorted per-model speedups.
struct line_chart {
  chart_frame frame;
  std::vector<line_series> series;
  x_axis_kind x_axis = x_axis_kind::numbers;
  std::optional<double> reference_y;  // a light-gray horizontal line
  bool legend_outside = false;  // the legend right of the plot area, where no point can hide it
};
[[nodiscard]] std::string render_line_chart(const line_chart& chart);

/// One series of a bar chart: values[i] (NaN: no bar) and errors[i] (NaN or missing: none) belong
/// to categories[i]. An interval (lows[i]..highs[i], e.g. a bootstrap interval that need not be
/// symmetric) is drawn instead of errors[i] where both ends are finite.
struct bar_series {
  std::string name;
  std::vector<double> values;
  std::vector<double> errors;
  std::string color;  // a CSS colour; "": palette_color of the series' index
  std::vector<double> lows, highs;
};

/// Horizontal grouped bars: one group per category, top to bottom in the given order, one bar per
/// series, each labelled with its value (2 decimals). The value axis starts at 0.
struct bar_chart {
  chart_frame frame;  // x_label: the value axis; y_label: the category axis
  std::vector<std::string> categories;
  std::vector<bar_series> series;
  std::optional<double> reference_x;  // a light-gray vertical line, e.g. 1.0
  bool value_labels = true;
  bool legend_outside = false;  // the legend right of the plot area, where no bar can hide it
};
[[nodiscard]] std::string render_bar_chart(const bar_chart& chart);

/// One distribution, e.g. the per-repeat times of one model.
struct distribution {
  std::string label;
  std::vector<double> values;  // NaN values are ignored
  std::string color;           // a CSS colour; "": palette_color of the group's index
};

/// Vertical box plots (median, quartiles by linear interpolation, whiskers at min and max) with the
/// individual values drawn over them as a strip (deterministic horizontal jitter). Group labels are
/// rotated when there are more than 8 groups or the widest label does not fit its slot.
struct distribution_chart {
  chart_frame frame;  // x_label: the groups; y_label: the values
  std::vector<distribution> groups;
  std::optional<double> reference_y;
  bool boxes = true;
  bool points = true;
};
[[nodiscard]] std::string render_distribution_chart(const distribution_chart& chart);

/// The i-th colour of the charts' palette (matplotlib's tab10, repeating), e.g. "#1f77b4".
[[nodiscard]] const char* palette_color(size_t i);

/// Text with &, <, >, " and ' escaped, and characters XML 1.0 forbids dropped.
[[nodiscard]] std::string escape_xml(const std::string& text);

/// Evenly spaced "nice" tick values (1, 2, 2.5 or 5 times a power of ten) covering [low, high].
[[nodiscard]] std::vector<double> nice_ticks(double low, double high, int target_count);

}  // namespace benchmatrix::svg
