// Reading whole text files and their tails (child stderr, helper logs, manifests, sources).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace benchmatrix {

/// The file's bytes; "" when it is missing or unreadable.
[[nodiscard]] std::string read_text_file(const std::filesystem::path& path);

/// The last `limit` bytes of the file ("" when missing or empty), preceded by
/// "[... N earlier bytes of <what> omitted ...]\n" when it is longer.
[[nodiscard]] std::string read_file_tail(const std::filesystem::path& path, std::uintmax_t limit,
                                         const std::string& what);

}  // namespace benchmatrix
