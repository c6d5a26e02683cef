// One child process (Boost.Process launch), in its own process group or in the caller's, that dies
// with its parent (PR_SET_PDEATHSIG), with non-blocking status polls and group-wide termination:
// SIGTERM, a grace period, then SIGKILL (as CTest does on timeouts). Several children with
// deadlines and a cleanup process are managed by child_pool (process/child_pool.hpp).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace benchmatrix {

/// How a child ended.
struct child_exit {
  bool signaled = false;  // true: killed by `signal`; false: exited with `exit_code`
  int exit_code = 0;
  int signal = 0;
  [[nodiscard]] bool success() const { return !signaled && exit_code == 0; }
  /// From a waitpid(2) status.
  [[nodiscard]] static child_exit from_wait_status(int status);
  /// "exited with status 3" / "killed by signal SIGSEGV (Segmentation fault)".
  [[nodiscard]] std::string describe() const;
};

/// Thrown when a program cannot be started; what() is "cannot launch <program>: <reason>".
struct launch_error : std::runtime_error {
  launch_error(std::string program, std::string reason);
  std::string program;
  std::string reason;  // the operating system's, e.g. "No such file or directory"
};

/// Which process group a child joins.
enum class process_group {
  own,     // a new group led by the child: killing it reaches everything the child forked
  caller,  // the caller's: a signal to the caller's group (timeout, Ctrl-C) reaches it too
};

class child_process {
public:
  /// Starts argv[0] with argv[1..] and exactly `environment`, stdin from /dev/null, stdout and
  /// stderr into the given files (both into one when the paths are equal), in `group`.
  /// The child gets SIGKILL when the thread that started it ends (PR_SET_PDEATHSIG): start children
  /// from a thread that outlives them (the main thread); a parent killed by SIGKILL leaves none.
  /// Throws launch_error when the program cannot be started.
  child_process(const std::vector<std::string>& argv,
                const std::map<std::string, std::string>& environment,
                const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path,
                process_group group = process_group::own);
  /// Starts a fork of this process that runs `entry` as if it were a program exec'd with exactly
  /// `environment` (process/forked_child.hpp) and exits with its status; otherwise as above.
  /// `name` stands for the program in errors. Throws launch_error when this process has other
  /// threads (fork_start_unsafe_reason), an output file cannot be written or fork fails.
  child_process(const std::function<int()>& entry, const std::string& name,
                const std::map<std::string, std::string>& environment,
                const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path,
                process_group group = process_group::own);
  /// Kills the whole group (SIGKILL) and reaps the child if it is still running.
  ~child_process();
  child_process(const child_process&) = delete;  // owns a pid: exactly one owner reaps it
  child_process& operator=(const child_process&) = delete;

  /// The exit status once the child has ended (reaped; the rest of its group is killed), else
  /// nullopt.
  [[nodiscard]] std::optional<child_exit> poll();
  /// SIGTERM to the group; after `grace` SIGKILL; returns once the child is reaped.
  child_exit terminate(std::chrono::duration<double> grace);
  /// Blocks until the child ends; returns its exit status.
  child_exit wait();

  [[nodiscard]] int pid() const { return m_pid; }
  [[nodiscard]] std::chrono::steady_clock::time_point started() const { return m_started; }

private:
  void kill_group(int signal) const;
  int m_pid = -1;
  process_group m_group = process_group::own;
  std::optional<child_exit> m_exit;
  std::chrono::steady_clock::time_point m_started;
};

/// The current process environment as a map (the base of a child's environment).
[[nodiscard]] std::map<std::string, std::string> current_environment();

}  // namespace benchmatrix
