// A child started as a fork of this process that runs a function instead of exec'ing a program:
// it skips loading LibTorch again, whose operator registration costs about 0.4 s of CPU per process
// (experiment_runner --help: 0.39 s on the 2-core Xeon build machine, 2026-12-07), twice per config
// under --verify. The child is set up as exec would leave it: only the given environment, stdin
// from /dev/null, stdout and stderr into the given descriptors, every close-on-exec descriptor
// closed, caught signals back to their defaults. It ends with exit, as a program returning from
// main does; the parent's buffered output is written before the fork, so never twice.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace benchmatrix {

/// Why this process cannot start a child by fork now, or nullopt when it can: fork copies only the
/// calling thread, so a lock another thread held (the allocator's, a library's) would stay held
/// in the child forever.
[[nodiscard]] std::optional<std::string> fork_start_unsafe_reason();

/// In the child, right after fork (and the caller's process-group and parent-death setup): makes
/// the process look freshly exec'd (see above), runs `entry` and exits with its status (1, with
/// its message on stderr, when it throws).
[[noreturn]] void run_forked_child(const std::function<int()>& entry,
                                   const std::map<std::string, std::string>& environment,
                                   int stdout_fd, int stderr_fd);

}  // namespace benchmatrix
