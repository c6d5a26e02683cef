// The compile service (python -m benchmatrix_service, issue 22): a fork server that imports torch
// once and runs each Python helper (`python -m benchmatrix_compile ...`) in a process forked from
// itself, so that a sweep pays torch's import once instead of once per compile. This file holds
// the client (run_in_service: one Unix-socket connection per helper run, JSON lines; the
// protocol is in python/benchmatrix_service/__main__.py) and the service's lifetime owner
// (helper_service: started once per sweep by the runner, stopped at its end). run_helper
// (process/helper_process.hpp) sends its helpers here when the environment names a service.
#pragma once

#include "process/child_process.hpp"
#include "process/helper_process.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

/// The environment variable naming the service's socket; set by the runner for its children.
inline constexpr const char* helper_service_variable = "BENCHMATRIX_HELPER_SERVICE";

/// How a request to the service ended: the helper's result when it ran there, else why it did
/// not (the service cannot be reached, or refused the request): the caller then runs it itself.
struct service_outcome {
  std::optional<helper_result> result;
  std::string unserved_reason;
};

/// Asks the service at `socket` to run `python -m module args...` with exactly `environment`,
/// stdout and stderr into `log_path`, in the current directory and on the calling thread's CPUs,
/// and waits for it. The service kills the helper's process group if this connection closes first
/// (the calling process was killed). Throws std::runtime_error when the service ended while the
/// helper ran (the helper died with it).
[[nodiscard]] service_outcome run_in_service(const std::filesystem::path& socket,
                                             const std::string& python, const std::string& module,
                                             const std::vector<std::string>& args,
                                             const std::map<std::string, std::string>& environment,
                                             const std::filesystem::path& log_path);

/// The running service: `python -m benchmatrix_service --socket <socket_directory>/service.sock`
/// in its own process group, dying with the thread that started it (child_process), stdout and
/// stderr in `log_path`. The destructor stops it: SIGTERM, then SIGKILL after a grace period;
/// the service kills the helpers still running.
class helper_service {
public:
  /// `socket_directory` must be private to this user (0700): anyone who can connect can run
  /// Python as this user. `import_at_start`: import torch at once (a phase with nothing timed
  /// beside it, compile-ahead) rather than at the first request. Throws std::runtime_error when
  /// the socket path is too long for a Unix socket or the service cannot be started.
  helper_service(const std::string& python, const std::map<std::string, std::string>& environment,
                 const std::filesystem::path& socket_directory,
                 const std::filesystem::path& log_path, bool import_at_start);
  ~helper_service();
  helper_service(const helper_service&) = delete; // owns the service process
  helper_service& operator=(const helper_service&) = delete;

  [[nodiscard]] const std::filesystem::path& socket() const { return m_socket; }

private:
  std::filesystem::path m_socket;
  std::optional<child_process> m_process;
};

} // namespace benchmatrix
