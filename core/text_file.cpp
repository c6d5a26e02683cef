#include "core/text_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

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

void replace_text_file(const std::filesystem::path& path, const std::string& text) {
  const auto directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const auto temporary =
      directory / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
  try {
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      if (!out) throw std::runtime_error("cannot create " + temporary.string());
      out << text;
      if (!out.flush()) throw std::runtime_error("cannot write " + temporary.string());
    }
    // On disk before the rename: a crash right after must not leave an empty file in its place.
    const int fd = ::open(temporary.c_str(), O_RDONLY);
    const bool synced = fd >= 0 && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!synced) throw std::runtime_error("cannot fsync " + temporary.string());
    std::filesystem::rename(temporary, path);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
}

void write_binary_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace benchmatrix
