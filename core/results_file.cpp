#include "core/results_file.hpp"
#include "core/text_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace benchmatrix {
namespace {

std::runtime_error os_error(const std::string& what, const std::filesystem::path& path) {
  return std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

void write_all(int fd, const std::string& data, const std::filesystem::path& path) {
  size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw os_error("cannot write", path);
    }
    written += static_cast<size_t>(n);
  }
}

bool ends_without_newline(int fd) {
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0) return false;
  char last = '\n';
  return ::pread(fd, &last, 1, size - 1) == 1 && last != '\n';
}

}  // namespace

results_writer::results_writer(std::filesystem::path path) : m_path(std::move(path)) {
  if (m_path.has_parent_path()) std::filesystem::create_directories(m_path.parent_path());
  const auto lock_path = m_path.string() + ".lock";
  m_lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (m_lock_fd < 0) throw os_error("cannot open lock file", lock_path);
  if (::flock(m_lock_fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(m_lock_fd);
    throw std::runtime_error("another experiment_runner is writing " + m_path.string() +
                             " (lock " + lock_path + " is held); wait for it or choose another "
                             "--output-dirname/--output-basename");
  }
}

results_writer::~results_writer() {
  if (m_lock_fd >= 0) ::close(m_lock_fd);  // closing releases the flock
}

void results_writer::append(const std::string& json_line) {
  const int fd = ::open(m_path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw os_error("cannot open results file", m_path);
  try {
    std::string data = ends_without_newline(fd) ? "\n" : "";
    data += json_line;
    data += '\n';
    write_all(fd, data, m_path);
    if (::fsync(fd) != 0) throw os_error("cannot fsync", m_path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

std::vector<results_line>
read_results(const std::filesystem::path& path,
             const std::function<void(size_t, const std::string&)>& on_corrupt) {
  std::vector<results_line> lines;
  std::ifstream in(path);
  if (!in) return lines;
  std::string text;
  size_t number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      auto record = parse_json(text, "line " + std::to_string(number));
      if (!record.IsObject()) throw std::runtime_error("not a JSON object");
      lines.push_back({number, text, std::move(record)});
    } catch (const std::exception& e) {
      on_corrupt(number, e.what());
    }
  }
  return lines;
}

void replace_results(const std::filesystem::path& path, const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + '\n';
  replace_text_file(path, text);
}

}  // namespace benchmatrix
