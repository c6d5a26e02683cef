// A small process forked beside the children that cleans up after a parent that dies without
// running its destructors (SIGKILL, a crash): it blocks on a socket from the parent, and when that
// closes without a dismissal it SIGKILLs the process groups it was told about (the children and
// whatever they forked: the compile helper, its Python compile workers) and removes the scratch
// directory.
//
// Why a separate process: a SIGKILLed parent runs no code, so nothing inside it can remove its
// /tmp/benchmatrix-* directory; the children cannot either (PR_SET_PDEATHSIG kills them at once,
// and several of them share the directory). The kernel closes every descriptor of a dead process,
// so a watched socket notices every kind of parent exit with no polling.
#pragma once

#include <filesystem>

namespace benchmatrix {

class parent_death_janitor {
public:
  /// Forks the janitor. `directory` (empty: none) is removed with everything in it when this
  /// process dies undismissed. Throws std::runtime_error when the janitor cannot be started.
  explicit parent_death_janitor(const std::filesystem::path& directory);
  /// Dismisses the janitor (this process cleans up itself) and reaps it.
  ~parent_death_janitor();
  parent_death_janitor(const parent_death_janitor&) = delete; // owns a pid and a socket
  parent_death_janitor& operator=(const parent_death_janitor&) = delete;

  /// The janitor SIGKILLs this process group if the parent dies while it is watched.
  void watch_group(int pgid);
  /// The group is gone (its leader reaped): the pid may be reused, the janitor must not kill it.
  void forget_group(int pgid);

  [[nodiscard]] int pid() const { return m_pid; }

private:
  void send(int value);
  int m_pid = -1;
  int m_socket = -1; // the parent's end; the janitor sees EOF when every copy of it is closed
};

} // namespace benchmatrix
