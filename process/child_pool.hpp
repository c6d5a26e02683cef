// The one way benchmatrix runs child processes that may hang or crash (the sweep's timing and
// verifier children, backend_bench's op children, run_and_check's evaluation children): each in its
// own process group with a deadline, stopped by SIGTERM to the group, a grace period, then SIGKILL;
// stdout and stderr into files. None outlives the parent: children die with it (PR_SET_PDEATHSIG),
// and a parent_death_janitor kills their groups and removes the pool's scratch directory when the
// parent dies without cleaning up (SIGKILL). The pool polls; start and collect from one thread, the
// one that outlives the children (the main thread: the parent-death signal follows that thread).
#pragma once

#include "process/child_process.hpp"
#include "process/parent_death_janitor.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

class child_pool {
public:
  using child_id = std::uint64_t;
  using seconds = std::chrono::duration<double>;

  /// A child that ended, or was stopped at its deadline.
  struct ended {
    child_id id = 0;
    child_exit exit;
    bool timed_out = false; // it ran past its timeout and was stopped (SIGTERM, grace, SIGKILL)
    double seconds = 0;     // from its start until its end (or its deadline) was seen
  };

  /// `grace`: how long a stopped child's group has between SIGTERM and SIGKILL.
  /// `scratch_prefix`: when not empty, a fresh directory <temp dir>/<prefix>XXXXXX (TMPDIR
  /// honoured) that scratch() names, removed on every exit path: by the destructor, or by the
  /// janitor when this process is killed. Throws std::runtime_error when the directory or janitor
  /// cannot be made.
  explicit child_pool(seconds grace, const std::string& scratch_prefix = "");
  /// Kills every child still running (the whole group, SIGKILL), reaps it, removes the scratch
  /// directory and dismisses the janitor.
  ~child_pool();
  child_pool(const child_pool&) = delete; // owns children, a directory and the janitor
  child_pool& operator=(const child_pool&) = delete;

  /// The scratch directory; empty when the pool was made without a prefix.
  [[nodiscard]] const std::filesystem::path& scratch() const { return m_scratch; }

  /// Starts argv in its own process group (see child_process) with a deadline `timeout` from now.
  /// Throws launch_error when the program cannot be started.
  child_id start(const std::vector<std::string>& argv,
                 const std::map<std::string, std::string>& environment,
                 const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path,
                 seconds timeout);
  /// Starts a fork of this process that runs `entry` (see child_process), as above; `name` stands
  /// for the program in errors.
  child_id start(const std::function<int()>& entry, const std::string& name,
                 const std::map<std::string, std::string>& environment,
                 const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path,
                 seconds timeout);
  /// The children that ended since the last call, waiting up to `wait` for one when none has (not
  /// at all when the pool is empty). A child past its deadline is stopped here (this blocks up to
  /// the grace period) and comes back with timed_out set. Ended children leave the pool.
  std::vector<ended> collect(std::chrono::milliseconds wait);
  /// Starts argv and waits for it to end or time out; for a pool with no other child running.
  ended run(const std::vector<std::string>& argv,
            const std::map<std::string, std::string>& environment,
            const std::filesystem::path& stdout_path, const std::filesystem::path& stderr_path,
            seconds timeout);
  /// Stops a running child now (SIGTERM to its group, the grace period, SIGKILL); it leaves the
  /// pool.
  child_exit stop(child_id id);

  [[nodiscard]] std::chrono::steady_clock::time_point started(child_id id) const;
  [[nodiscard]] bool empty() const { return m_children.empty(); }

private:
  struct member {
    std::unique_ptr<child_process> process;
    std::chrono::steady_clock::time_point deadline;
  };
  /// The children that ended or ran past their deadline (stopped), without waiting.
  std::vector<ended> reap();
  void forget(std::map<child_id, member>::iterator it);
  /// Makes a started child a member with a deadline `timeout` from its start; returns its id.
  child_id adopt(std::unique_ptr<child_process> process, seconds timeout);

  seconds m_grace;
  std::filesystem::path m_scratch;
  std::unique_ptr<parent_death_janitor> m_janitor;
  std::map<child_id, member> m_children; // ordered by id: ended children come back in start order
  child_id m_next_id = 1;
};

} // namespace benchmatrix
