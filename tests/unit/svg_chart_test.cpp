// The SVG charts: escaped text, nice ticks, and the elements each chart draws.
#include "output/svg_chart.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace benchmatrix::svg;

namespace {
size_t count(const std::string& text, const std::string& piece) {
  size_t n = 0;
  for (size_t at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("text is escaped and control characters XML forbids are dropped") {
  CHECK(escape_xml("a<b & \"c\" 'd'>\x01") == "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
}

TEST_CASE("nice ticks are 1, 2, 2.5 or 5 times a power of ten and cover the range") {
  CHECK(nice_ticks(0, 1, 5) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1});
  CHECK(nice_ticks(0.93, 3.3, 6) == std::vector<double>{1, 1.5, 2, 2.5, 3});
  CHECK(nice_ticks(0, 10, 4) == std::vector<double>{0, 2.5, 5, 7.5, 10});
}

TEST_CASE("charts draw their series, error bars, reference line and legend") {
  line_chart line;
  line.frame.title = "Speedup\nnightly <run>";
  line.reference_y = 1.0;
  line.series.push_back({"Inductor", {{0, 1.5, 0.1, "resnet18"}, {1, no_value, no_value, ""}, {2, 2.0, no_value, "bert"}},
                         line_dash::dashed, marker_shape::diamond, true});
  const std::string l = render_line_chart(line);
  CHECK(l.rfind("<?xml", 0) == 0);
  CHECK(count(l, "class=\"error-bar\"") == 1);
  CHECK(count(l, "class=\"reference\"") == 1);
  CHECK(count(l, "<polygon") == 3);  // two points and the legend's sample
  CHECK(l.find("nightly &lt;run&gt;") != std::string::npos);
  CHECK(l.find(">resnet18</text>") != std::string::npos);
  CHECK(l.find("width=\"864\" height=\"648\"") != std::string::npos);  // 9 x 6.75 inches

  bar_chart bars;
  bars.categories = {"alexnet", "GEOMEAN"};
  bars.series = {{"Eager", {1.0, 1.0}, {0.0, 0.1}}, {"Inductor", {no_value, 2.25}, {}}};
  bars.reference_x = 1.0;
  const std::string b = render_bar_chart(bars);
  CHECK(count(b, "class=\"bar\"") == 3);
  CHECK(count(b, "class=\"error-bar\"") == 1);  // a zero error draws nothing
  CHECK(b.find(">2.25</text>") != std::string::npos);

  distribution_chart d;
  d.groups = {{"resnet18", {1, 2, 3, NAN}}, {"empty", {}}};
  const std::string s = render_distribution_chart(d);
  CHECK(count(s, "class=\"point\"") == 3);
  CHECK(count(s, "class=\"box\"") == 1);
  CHECK(count(s, "class=\"median\"") == 1);
}

TEST_CASE("a line point draws its asymmetric interval, its flag ring and its tooltip") {
  line_chart line;
  line_point quiet{1, 10.0, no_value, ""};
  quiet.low = 9.0;
  quiet.high = 12.0;
  line_point flagged{2, 30.0, no_value, ""};
  flagged.flagged = true;
  flagged.tooltip = "night 2: SLOWER <x>";
  line.series.push_back({"eval/eager", {quiet, flagged}});
  const std::string l = render_line_chart(line);
  CHECK(count(l, "<g class=\"point\">") == 1);
  CHECK(count(l, "<g class=\"point flagged\">") == 1);
  CHECK(count(l, "class=\"flag\"") == 1);
  CHECK(count(l, "class=\"error-bar\"") == 1);  // the interval; the flagged point has none
  CHECK(l.find("<title>night 2: SLOWER &lt;x&gt;</title>") != std::string::npos);
}

TEST_CASE("explicit colours, a legend outside the bars, and group labels rotated only when they do not fit") {
  bar_chart bars;
  bars.frame.width_in = 6;
  bars.categories = {"alexnet"};
  bars.series = {{"Inductor", {2.0}, {0.1}, "#abcdef"}, {"TorchScript", {1.5}, {}, ""}};
  const std::string inside = render_bar_chart(bars);
  bars.legend_outside = true;
  const std::string outside = render_bar_chart(bars);
  CHECK(count(outside, "fill=\"#abcdef\"") == 2);  // the bar and its legend key
  CHECK(count(outside, std::string("fill=\"") + palette_color(1) + "\"") == 2);  // the palette's second
  // outside: the plot frame ends left of the legend box, so its width shrinks
  const auto frame_width = [](const std::string& svg) {
    const auto at = svg.find("fill=\"none\" stroke=\"black\"");
    const auto rect = svg.rfind("<rect", at);
    const auto w = svg.find("width=\"", rect) + 7;
    return std::stod(svg.substr(w, svg.find('"', w) - w));
  };
  CHECK(frame_width(outside) < frame_width(inside) - 80);

  distribution_chart d;
  d.frame.width_in = 4.5;
  d.groups = {{"Eager", {1, 2}, "#123456"}, {"TorchScript", {3}, ""}};
  const std::string fits = render_distribution_chart(d);
  CHECK(fits.find("rotate(-40)") == std::string::npos);
  CHECK(fits.find("fill=\"#123456\"") != std::string::npos);
  d.frame.width_in = 2;
  CHECK(render_distribution_chart(d).find("rotate(-40)") != std::string::npos);
}
