#include "process/child_process.hpp"

#include "process/forked_child.hpp"

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace bp = boost::process;

namespace benchmatrix {
namespace {

/// The file to exec for `program`: a bare name ("python3", as $BENCHMATRIX_PYTHON may say) is
/// looked up on the child's PATH (its environment's, else ours) as a shell would, since
/// Boost.Process execs the name as given; a name with a '/' is used as it is.
std::string executable_for(const std::string& program,
                           const std::map<std::string, std::string>& environment) {
  if (program.find('/') != std::string::npos) return program;
  const auto child_path = environment.find("PATH");
  const char* own_path = std::getenv("PATH");
  const std::string search =
      child_path != environment.end() ? child_path->second : (own_path ? own_path : "");
  std::vector<boost::filesystem::path> folders;
  for (std::size_t start = 0; start <= search.size();) {
    const auto end = std::min(search.find(':', start), search.size());
    folders.emplace_back(end == start ? "." : search.substr(start, end - start));  // "" is "."
    start = end + 1;
  }
  const auto found = bp::search_path(program, folders);
  if (found.empty()) throw launch_error(program, "not found on PATH (" + search + ")");
  return found.string();
}

/// In the child, between fork and exec or the forked entry (async-signal-safe calls only): the
/// group, then the parent-death signal. SIGKILL, not SIGTERM: a child that ignores SIGTERM (a
/// hang) must not outlive its parent either. If the parent died before prctl, the child was
/// already reparented: getppid() says so; it ends.
void join_group_and_die_with(pid_t parent, bool own_group) {
  if (own_group) ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
}

/// `path` emptied and opened for writing (close-on-exec: the forked child keeps only its dup2'd
/// copy); throws launch_error naming `program` when it cannot be.
int open_output(const std::filesystem::path& path, const std::string& program) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw launch_error(program, "cannot write its output to " + path.string() + ": " +
                                    std::strerror(errno));
  return fd;
}

}  // namespace

launch_error::launch_error(std::string program_, std::string reason_)
    : std::runtime_error("cannot launch " + program_ + ": " + reason_),
      program(std::move(program_)),
      reason(std::move(reason_)) {}

child_exit child_exit::from_wait_status(int status) {
  child_exit e;
  if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.signal = WTERMSIG(status);
  } else {
    e.exit_code = WEXITSTATUS(status);
  }
  return e;
}

std::string child_exit::describe() const {
  if (!signaled) return "exited with status " + std::to_string(exit_code);
  const char* name = sigabbrev_np(signal);
  const char* description = sigdescr_np(signal);
  return "killed by signal " + (name ? "SIG" + std::string(name) : std::to_string(signal)) +
         (description ? " (" + std::string(description) + ")" : "");
}

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry; ++entry) {
    const std::string text(*entry);
    const auto eq = text.find('=');
    if (eq != std::string::npos) env[text.substr(0, eq)] = text.substr(eq + 1);
  }
  return env;
}

child_process::child_process(const std::vector<std::string>& argv,
                             const std::map<std::string, std::string>& environment,
                             const std::filesystem::path& stdout_path,
                             const std::filesystem::path& stderr_path, process_group group)
    : m_group(group) {
  if (argv.empty()) throw std::runtime_error("cannot launch a child: empty command line");
  const std::string executable = executable_for(argv.front(), environment);
  // Emptied first: Boost.Process 1.74 opens an output file without O_TRUNC, so a child writing
  // less than the last one to use the path would leave that one's tail behind its own output.
  for (const auto& path : {stdout_path, stderr_path})
    if (!std::ofstream(path, std::ios::trunc))
      throw launch_error(argv.front(), "cannot write its output to " + path.string());
  bp::environment env;
  for (const auto& [key, value] : environment) env[key] = value;
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  const pid_t parent = ::getpid();
  const bool own_group = group == process_group::own;
  const auto setup = [parent, own_group](auto&) { join_group_and_die_with(parent, own_group); };
  try {
    if (stdout_path == stderr_path) {
      bp::child child(bp::exe = executable, bp::args = args, env, bp::std_in < bp::null,
                      (bp::std_out & bp::std_err) > stdout_path.string(),
                      bp::extend::on_exec_setup = setup);
      m_pid = child.id();
      child.detach();  // this class reaps the pid itself (waitpid), boost must not
    } else {
      bp::child child(bp::exe = executable, bp::args = args, env, bp::std_in < bp::null,
                      bp::std_out > stdout_path.string(), bp::std_err > stderr_path.string(),
                      bp::extend::on_exec_setup = setup);
      m_pid = child.id();
      child.detach();
    }
  } catch (const bp::process_error& e) {
    throw launch_error(argv.front(), e.what());
  }
  // Also from the parent side, so kill(-pid) works at once (no race with the child's setpgid).
  if (own_group) ::setpgid(m_pid, m_pid);
  m_started = std::chrono::steady_clock::now();
}

child_process::child_process(const std::function<int()>& entry, const std::string& name,
                             const std::map<std::string, std::string>& environment,
                             const std::filesystem::path& stdout_path,
                             const std::filesystem::path& stderr_path, process_group group)
    : m_group(group) {
  if (const auto why = fork_start_unsafe_reason()) throw launch_error(name, "cannot fork: " + *why);
  const int stdout_fd = open_output(stdout_path, name);
  const int stderr_fd = stdout_path == stderr_path ? stdout_fd : open_output(stderr_path, name);
  // Whatever this process buffered is written now, once, not again by the child's copy.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const bool own_group = group == process_group::own;
  m_pid = ::fork();
  if (m_pid == 0) {
    join_group_and_die_with(parent, own_group);
    run_forked_child(entry, environment, stdout_fd, stderr_fd);
  }
  const int fork_errno = errno;
  ::close(stdout_fd);  // the child has its copies
  if (stderr_fd != stdout_fd) ::close(stderr_fd);
  if (m_pid < 0) throw launch_error(name, std::string("fork: ") + std::strerror(fork_errno));
  if (own_group) ::setpgid(m_pid, m_pid);
  m_started = std::chrono::steady_clock::now();
}

child_process::~child_process() {
  if (m_pid > 0 && !m_exit) {
    kill_group(SIGKILL);
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void child_process::kill_group(int signal) const {
  if (m_pid <= 0) return;
  if (m_group == process_group::own)
    ::kill(-m_pid, signal);  // ESRCH (group already gone) is fine
  else if (!m_exit)
    ::kill(m_pid, signal);  // the caller's group is not ours to kill; a reaped pid may be reused
}

std::optional<child_exit> child_process::poll() {
  if (m_exit) return m_exit;
  int status = 0;
  const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
  if (r == 0) return std::nullopt;
  if (r < 0) {
    if (errno == EINTR) return std::nullopt;
    throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  m_exit = child_exit::from_wait_status(status);
  kill_group(SIGKILL);  // grandchildren (compile workers) must not outlive their config
  return m_exit;
}

child_exit child_process::terminate(std::chrono::duration<double> grace) {
  if (auto done = poll()) return *done;
  kill_group(SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto done = poll()) return *done;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill_group(SIGKILL);
  return wait();
}

child_exit child_process::wait() {
  if (m_exit) return *m_exit;
  int status = 0;
  while (::waitpid(m_pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  m_exit = child_exit::from_wait_status(status);
  kill_group(SIGKILL);  // grandchildren (compile workers) must not outlive their child
  return *m_exit;
}

}  // namespace benchmatrix
