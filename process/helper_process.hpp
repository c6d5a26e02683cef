// A helper program run to completion by a child (the compile helper): it stays in the caller's
// process group, so the parent's timeout or Ctrl-C, which signal the child's whole group, stop the
// helper (and the compile workers it forks) together with the child. It dies with the thread that
// started it (PR_SET_PDEATHSIG; run_helper blocks that thread until the helper ends), so a child
// killed by the parent's pool or by its own crash leaves no helper behind.
// When the environment variable BENCHMATRIX_HELPER_SERVICE names a compile service's socket
// (process/helper_service.hpp; the runner starts one per sweep), a `<python> -m <module> ...`
// helper runs there instead, in a process forked from a Python that has torch imported; the
// service kills it when this process dies. A service that cannot be reached or refuses the request
// (a different Python, or an environment that differs in what torch read at import) leaves the
// helper to run as a process of its own, with one warning per process.
#pragma once

#include "process/child_process.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace benchmatrix {

/// Bytes of a helper's output kept for error records (the tail, where a traceback ends).
inline constexpr std::uintmax_t helper_output_tail_bytes = 4000;

struct helper_result {
  child_exit exit;
  std::string output_tail;  // the last lines of its stdout+stderr, for error records
  double seconds = 0;       // wall time
};

/// Runs argv with `environment`, stdout and stderr both into `log_path`, and waits for it.
/// Throws std::runtime_error when it cannot be started.
[[nodiscard]] helper_result run_helper(const std::vector<std::string>& argv,
                                       const std::map<std::string, std::string>& environment,
                                       const std::filesystem::path& log_path);

}  // namespace benchmatrix
