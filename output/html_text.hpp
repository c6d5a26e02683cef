// Small text helpers the HTML report's sections share (html_report, html_report_comparison,
// html_report_trends): case folding for sorting, UTC timestamps, fixed decimals, element ids.
#pragma once

#include <string>

namespace benchmatrix::html {

/// ASCII lower case.
[[nodiscard]] std::string lower(std::string text);

/// Case-insensitive order, ties broken case-sensitively (so the order is total).
[[nodiscard]] bool case_insensitive_less(const std::string& a, const std::string& b);

/// Seconds since the epoch as "YYYY-MM-DD HH:MM:SS UTC".
[[nodiscard]] std::string utc_text(double seconds);

/// `v` with `decimals` digits after the point.
[[nodiscard]] std::string fixed(double v, int decimals);

/// `text` as an element id: every character but ASCII letters and digits becomes '-'.
[[nodiscard]] std::string anchor(const std::string& text);

}  // namespace benchmatrix::html
