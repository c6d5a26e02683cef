// Cell text shared by the report writers: CSV quoting and padding to a display width.
#pragma once

#include <cstddef>
#include <string>

namespace benchmatrix {

/// The text as one CSV field, as Python's csv module writes it: quoted (quotes doubled) when it
/// holds a comma, quote, CR or LF; unchanged otherwise.
[[nodiscard]] std::string csv_quoted(const std::string& text);

/// Characters as a terminal shows them: UTF-8 code points, not bytes.
[[nodiscard]] size_t display_width(const std::string& text);

/// The text padded with spaces to `width` display characters, on the left when `right` (numbers).
[[nodiscard]] std::string pad(const std::string& text, size_t width, bool right);

}  // namespace benchmatrix
