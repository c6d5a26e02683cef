#include "process/forked_child.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <vector>

namespace benchmatrix {
namespace {

/// The open descriptors of this process, from /proc/self/fd (the directory's own excluded).
std::vector<int> open_descriptors() {
  std::vector<int> fds;
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return fds;
  const int own = ::dirfd(dir);
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && fd != own) fds.push_back(static_cast<int>(fd));
  }
  ::closedir(dir);
  return fds;
}

/// What exec does to descriptors: those marked close-on-exec go, the rest stay.
void close_close_on_exec_descriptors() {
  for (const int fd : open_descriptors())
    if (fd > 2 && (::fcntl(fd, F_GETFD) & FD_CLOEXEC)) ::close(fd);
}

/// What exec does to signal dispositions: a caught signal goes back to its default (the sweep's
/// SIGINT/SIGTERM/SIGHUP handlers); ignored ones stay ignored; the mask stays.
void reset_caught_signals() {
  for (int signal = 1; signal < NSIG; ++signal) {
    struct sigaction current {};
    if (::sigaction(signal, nullptr, &current) != 0) continue;
    if (current.sa_handler == SIG_IGN || current.sa_handler == SIG_DFL) continue;
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    ::sigaction(signal, &fallback, nullptr);
  }
}

void replace_environment(const std::map<std::string, std::string>& environment) {
  ::clearenv();
  for (const auto& [key, value] : environment) ::setenv(key.c_str(), value.c_str(), 1);
}

void redirect_standard_streams(int stdout_fd, int stderr_fd) {
  const int null = ::open("/dev/null", O_RDONLY);
  if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(stdout_fd, 1) < 0 || ::dup2(stderr_fd, 2) < 0)
    ::_exit(127);
  for (const int fd : {null, stdout_fd, stderr_fd})
    if (fd > 2) ::close(fd);
}

}  // namespace

std::optional<std::string> fork_start_unsafe_reason() {
  std::size_t threads = 0;
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return "cannot count this process's threads (/proc/self/task)";
  while (const dirent* entry = ::readdir(dir))
    if (entry->d_name[0] != '.') ++threads;
  ::closedir(dir);
  if (threads != 1) return "this process runs " + std::to_string(threads) + " threads";
  return std::nullopt;
}

void run_forked_child(const std::function<int()>& entry,
                      const std::map<std::string, std::string>& environment, int stdout_fd,
                      int stderr_fd) {
  redirect_standard_streams(stdout_fd, stderr_fd);
  close_close_on_exec_descriptors();
  reset_caught_signals();
  replace_environment(environment);
  int status = 1;
  try {
    status = entry();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "error: an exception that is not a std::exception\n";
  }
  // As a program returning from main: the static objects' destructors and atexit handlers run
  // (a library's teardown may crash after the record was written: the sweep reports that). The
  // parent's buffered output was written before the fork; its objects on the stack (the pool and
  // its children) are not destroyed here, and no static object of benchmatrix acts outside the
  // process when destroyed.
  std::exit(status);
}

}  // namespace benchmatrix
