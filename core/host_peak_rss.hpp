// The process's host peak resident set size (Linux /proc), for the child's memory pass
// (worker/memory_pass.hpp): reset the peak, run the steps, read it. Torch-free.
//
// Linux keeps the peak RSS as VmHWM in /proc/self/status; writing "5" to /proc/self/clear_refs
// (kernel >= 4.0) resets it to the current RSS. Where that write is not permitted (a sandbox such
// as gVisor, a kernel without it, a seccomp policy), the peak cannot be reset: VmHWM is then the
// peak since the process started (model build and compilation included), which the result says
// so that the record labels the figure as a lifetime peak instead of passing it off as the step's.
#pragma once

#include <optional>
#include <string>

namespace benchmatrix {

/// What reset_host_peak_rss did.
struct host_peak_reset {
  bool reset = false;   // true: VmHWM now starts from the current RSS
  std::string failure;  // when not reset: why ("cannot write /proc/self/clear_refs: ...")
};

/// Resets the peak RSS to the current RSS (echo 5 > /proc/self/clear_refs).
[[nodiscard]] host_peak_reset reset_host_peak_rss();

/// VmHWM of /proc/self/status in bytes; nullopt where there is no such file or line (not Linux).
[[nodiscard]] std::optional<long long> host_peak_rss_bytes();

/// Parses VmHWM ("VmHWM:\t  123456 kB") out of a /proc/<pid>/status text, in bytes; nullopt
/// when the line is absent or malformed.
[[nodiscard]] std::optional<long long> parse_vm_hwm_bytes(const std::string& status_text);

}  // namespace benchmatrix
