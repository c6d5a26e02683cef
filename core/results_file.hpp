// results.jsonl on disk: one complete record per line, appended by a single writer that holds an
// exclusive lock, flushed and fsynced per record; read back tolerating corrupt or truncated lines.
#pragma once

#include "core/python_json.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace benchmatrix {

/// The only writer of a results file. Holds an flock on "<file>.lock" for its lifetime, so a second
/// runner on the same file fails at once instead of interleaving lines.
class results_writer {
public:
  /// Creates the directory if missing. Throws std::runtime_error when another process holds the lock.
  explicit results_writer(std::filesystem::path path);
  ~results_writer();
  results_writer(const results_writer&) = delete;  // one fd and one lock per writer
  results_writer& operator=(const results_writer&) = delete;

  /// Appends `json_line` and a newline in one write, then fsyncs. If the file does not end with a
  /// newline (a line cut off by a crash elsewhere), a newline is written first so records never merge.
  void append(const std::string& json_line);
  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

private:
  std::filesystem::path m_path;
  int m_lock_fd = -1;
};

/// Replaces `path` with `lines` (one per line) atomically (core/text_file's replace_text_file:
/// temporary file, fsync, rename), so a crash leaves the old file or the new one, never half. Throws
/// std::runtime_error when it cannot write.
void replace_results(const std::filesystem::path& path, const std::vector<std::string>& lines);

struct results_line {
  size_t line_number = 0;  // 1-based
  std::string text;
  json_document record;
};

/// Every parsable JSON object line of the file (missing file: none). Lines that do not parse, or are
/// not objects, go to `on_corrupt(line_number, message)` and are skipped.
[[nodiscard]] std::vector<results_line>
read_results(const std::filesystem::path& path,
             const std::function<void(size_t, const std::string&)>& on_corrupt);

}  // namespace benchmatrix
