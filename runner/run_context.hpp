// run_context.json: what a sweep ran with, written by the parent next to results.jsonl when the sweep
// starts (html_report shows it as the report's run context). Records carry the experiment and the
// accelerator (and their child's run_environment); this holds what they do not: the command line,
// the benchmatrix revision, the host, and the parent's run environment.
#pragma once

#include "core/machine_state.hpp"
#include "core/run_environment.hpp"
#include "core/machine_state.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

struct run_context {
  std::vector<std::string> command;         // argv as given
  std::string benchmatrix_revision;         // `git describe --always --dirty` of the source this
                                            // binary was built from, at build time; "unknown"
                                            // outside a git checkout
  run_environment environment;              // the parent's; its children inherit it
  std::string hostname;
  std::string cpu_model;                    // /proc/cpuinfo model name
  std::vector<std::string> gpus;            // nvidia-smi's names (the parent never touches CUDA)
  double started = 0;                       // seconds since the epoch
  host_state host;                          // load, CPUs, OMP_NUM_THREADS when the sweep started
  std::vector<gpu_reading> gpu_states;      // NVML's view of every GPU then (one `unavailable`
                                            // entry without a driver); NVML starts no CUDA context
};

/// The context of a run starting now on this host: hostname, CPU and GPU names, time, the
/// benchmatrix revision, the machine's state (host load, each GPU's clocks, temperature, power and
/// processes); `environment` is the parent's (torch_support/torch_run_environment.hpp).
[[nodiscard]] run_context current_run_context(std::vector<std::string> command,
                                              run_environment environment);

/// Replaces `path` atomically (temporary file + rename) with the context as one JSON object:
/// {"command", "torch_version", "cuda_version", "hostname", "cpu_model", "gpus", "started",
/// "benchmatrix_revision", "run_environment", "machine_state": {"host": {...}, "gpus": [...]}
/// (core/machine_state's layout) [, "earlier_sweeps"]} (torch_version and
/// cuda_version repeat run_environment's, for readers of the older files). With `keep_earlier` (a
/// sweep that resumes into the same results file), the file it replaces is kept as history: its
/// "earlier_sweeps" and then its own {"command", "started", "hostname"} become this one's
/// "earlier_sweeps", oldest first, so the report of a resumed run names every command that wrote
/// its records (an unreadable old file is dropped).
/// Throws std::runtime_error when the file cannot be written.
void write_run_context(const std::filesystem::path& path, const run_context& context,
                       bool keep_earlier = false);

}  // namespace benchmatrix
