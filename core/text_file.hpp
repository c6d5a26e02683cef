// Reading whole text files and their tails (child stderr, helper logs, manifests, sources), and
// replacing a file atomically (reports, rewritten results files).
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

/// Replaces the file with `text` atomically: written to a temporary file beside it, fsynced, then renamed
/// over it, so a reader (or a crash) sees the old file or the new one, never half of one. Throws
/// std::runtime_error naming the path when it cannot be written; the old file is then untouched.
void replace_text_file(const std::filesystem::path& path, const std::string& text);

/// Writes `bytes` to the file, replacing what it held (not atomic: for files inside a directory
/// that is itself published atomically, e.g. a compile helper's inputs). Throws std::runtime_error
/// naming the path when it cannot be written.
void write_binary_file(const std::filesystem::path& path, const std::string& bytes);

}  // namespace benchmatrix
