#include "process/parent_death_janitor.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <signal.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace benchmatrix {
namespace {

/// Process groups one janitor can watch at once (a sweep runs one child per GPU; a full table drops
/// new groups, which still die by PR_SET_PDEATHSIG, only their grandchildren would survive).
constexpr std::size_t max_watched_groups = 4096;
/// The message that dismisses the janitor (groups are positive pids; a negative one is forgotten).
constexpr int dismissal = 0;
/// How long the janitor waits for the killed groups to be gone before removing the directory, so
/// no dying child writes into it afterwards (seconds; they are SIGKILLed, this is rarely reached).
constexpr int group_exit_wait_s = 2;

bool group_alive(int pgid) {
  return ::kill(-pgid, 0) == 0;
}

/// The janitor's whole life. Runs in a fork of a possibly multi-threaded parent: only
/// async-signal-safe calls (no allocation, no locks); `groups` and `rm_argv` were made before fork.
[[noreturn]] void janitor_main(int socket, int* groups, char* const* rm_argv) {
  // Its own process group and no terminal signals: a Ctrl-C, a closed terminal or a kill of the
  // parent's group must not take the janitor with the parent — it is what cleans up after them.
  ::setpgid(0, 0);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE})
    ::sigaction(signal, &ignore, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Nothing of the parent's stays open here: a pipe on its stdout must see EOF when the parent
  // ends, and a results-file lock must be released with it.
  const int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd)
    ::dup2(null, fd);
  if (socket != 3) {
    ::dup2(socket, 3);
    socket = 3;
  }
  if (::syscall(SYS_close_range, 4U, ~0U, 0U) != 0)
    for (int fd = 4; fd < 65536; ++fd)
      ::close(fd);

  std::size_t count = 0;
  for (;;) {
    int value = 0;
    const ssize_t got = ::recv(socket, &value, sizeof value, MSG_WAITALL);
    if (got < 0 && errno == EINTR)
      continue;
    if (got != static_cast<ssize_t>(sizeof value))
      break; // EOF: the parent is gone
    if (value == dismissal)
      ::_exit(0);
    if (value > 0) {
      if (count < max_watched_groups)
        groups[count++] = value;
    } else {
      for (std::size_t i = 0; i < count; ++i)
        if (groups[i] == -value)
          groups[i] = groups[--count];
    }
  }
  for (std::size_t i = 0; i < count; ++i)
    ::kill(-groups[i], SIGKILL);
  const timespec step{0, 20 * 1000 * 1000};
  for (int waited = 0; waited < group_exit_wait_s * 50; ++waited) {
    bool any = false;
    for (std::size_t i = 0; i < count; ++i)
      any = any || group_alive(groups[i]);
    if (!any)
      break;
    ::nanosleep(&step, nullptr);
  }
  if (rm_argv[3] != nullptr)
    ::execv(rm_argv[0], rm_argv);
  ::_exit(0);
}

} // namespace

parent_death_janitor::parent_death_janitor(const std::filesystem::path& directory) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
    throw std::runtime_error(std::string("cannot start the cleanup process: socketpair: ") +
                             std::strerror(errno));
  // Everything the janitor needs is allocated here, before fork.
  std::vector<int> groups(max_watched_groups, 0);
  std::string rm = "/bin/rm", flags = "-rf", end_of_options = "--", target = directory.string();
  std::vector<char*> rm_argv = {rm.data(), flags.data(), end_of_options.data(),
                                target.empty() ? nullptr : target.data(), nullptr};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(ends[0]);
    janitor_main(ends[1], groups.data(), rm_argv.data());
  }
  ::close(ends[1]);
  if (pid < 0) {
    ::close(ends[0]);
    throw std::runtime_error(std::string("cannot start the cleanup process: fork: ") +
                             std::strerror(errno));
  }
  m_pid = pid;
  m_socket = ends[0];
}

parent_death_janitor::~parent_death_janitor() {
  send(dismissal);
  ::close(m_socket);
  int status = 0;
  while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
  }
}

void parent_death_janitor::watch_group(int pgid) {
  send(pgid);
}

void parent_death_janitor::forget_group(int pgid) {
  send(-pgid);
}

void parent_death_janitor::send(int value) {
  // MSG_NOSIGNAL: a janitor that died (someone killed it) costs its cleanup, not this process.
  while (::send(m_socket, &value, sizeof value, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

} // namespace benchmatrix
