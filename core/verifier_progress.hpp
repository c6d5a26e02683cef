// Where a verifier child is: the run it is in and how long its finished runs took. The child
// rewrites it at each step, beside its result file, so that a parent that kills it at
// --subprocess-timeout can say in the record where the time went ("timed out after 300 seconds in
// its float64 reference run; finished: eager 2.3 s, eager_rerun 1.6 s") instead of only that it
// timed out. Torch-free: the runner reads what the worker writes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace benchmatrix {

struct verifier_progress {
  std::string step;  // what it is doing now: "eager run", "float64 reference run", ...
  std::vector<std::pair<std::string, double>> finished;  // run name, wall seconds, in order
};

/// The progress file of a verifier whose result file is `result_path`: "verifier_progress" beside
/// it.
[[nodiscard]] std::filesystem::path verifier_progress_path(const std::filesystem::path& result_path);

/// Replaces the progress file atomically (a reader sees the previous step or this one). Lines: the
/// step, then "<run> <seconds>" per finished run. Throws std::runtime_error naming the path.
void write_verifier_progress(const std::filesystem::path& path, const verifier_progress& progress);

/// The progress file's content; none when it is missing, empty or not in write_verifier_progress's
/// form (a parent's message then says nothing about where the verifier was).
[[nodiscard]] std::optional<verifier_progress> read_verifier_progress(
    const std::filesystem::path& path);

/// "in its float64 reference run; finished: eager 2.3 s, eager_rerun 1.6 s" (the finished part only
/// when a run finished; seconds to 3 significant digits).
[[nodiscard]] std::string describe_verifier_progress(const verifier_progress& progress);

}  // namespace benchmatrix
