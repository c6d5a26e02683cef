// A helper program run to completion by a child (the compile helper): it stays in the caller's
// process group, so the parent's timeout or Ctrl-C, which signal the child's whole group, stop the
// helper (and the compile workers it forks) together with the child. It dies with the thread that
// started it (PR_SET_PDEATHSIG; run_helper blocks that thread until the helper ends), so a child
// killed by the parent's pool or by its own crash leaves no helper behind.
#pragma once

#include "process/child_process.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace benchmatrix {

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
