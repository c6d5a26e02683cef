// Test support for the unit tests that work on files: a fresh directory removed afterwards, and a
// whole file read back.
#pragma once

#include "core/directory_tree.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace benchmatrix::testing {

/// A fresh directory under the system temp dir (named <prefix>-XXXXXX), removed afterwards.
struct temporary_directory {
  std::filesystem::path path;
  explicit temporary_directory(const std::string& prefix = "bm-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    path = ::mkdtemp(pattern.data());
  }
  ~temporary_directory() { remove_tree(path.string()); }
  temporary_directory(const temporary_directory&) = delete;
  temporary_directory& operator=(const temporary_directory&) = delete;
};

/// The whole file's bytes ("" when it cannot be opened).
inline std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace benchmatrix::testing
