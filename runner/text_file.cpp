#include "runner/text_file.hpp"

#include <fstream>
#include <sstream>

namespace benchmatrix {

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string read_file_tail(const std::filesystem::path& path, std::uintmax_t limit,
                           const std::string& what) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size == 0) return "";
  std::ifstream in(path, std::ios::binary);
  const auto skip = size > limit ? size - limit : 0;
  in.seekg(static_cast<std::streamoff>(skip));
  std::ostringstream text;
  text << in.rdbuf();
  if (skip == 0) return text.str();
  return "[... " + std::to_string(skip) + " earlier bytes of " + what + " omitted ...]\n" +
         text.str();
}

}  // namespace benchmatrix
