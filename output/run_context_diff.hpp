// What differs between the run_context.json files of two output directories
// (runner/run_context.hpp): the command, the benchmatrix revision, the LibTorch build, the thread settings, the CPU affinity,
// the host. compare_runs prints it above its rows, so a slowdown that came with `taskset -c 0` or
// another torch build is seen as such before the code is blamed.
#pragma once

#include "core/python_json.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

struct context_difference {
  std::string field;  // dotted path: "run_environment.threads.OMP_NUM_THREADS", "command"
  std::string a;      // the value in A: a string as is, a list space-separated, anything else
  std::string b;      // as JSON; "(absent)" when that side lacks the field
};

/// The fields whose values differ, A's order first, then fields only B has. Nested objects are
/// compared field by field; "started" and "earlier_sweeps" (when and what ran before, always
/// different) are not compared.
[[nodiscard]] std::vector<context_difference> run_context_differences(const json_value& a,
                                                                      const json_value& b);

/// `run`'s run_context.json when `run` is a directory that has one; nullopt otherwise (a results
/// file given by name may share its directory with other runs). Throws std::runtime_error when the
/// file exists but is not a JSON object.
[[nodiscard]] std::optional<json_document> run_context_of_directory(const std::filesystem::path& run);

/// The differences as text for the top of a comparison: "run context: A -> B differs in N
/// field(s):" and one "  field: a -> b" line each ("- `field`: a -> b" with `markdown`), or "run
/// context: the same in A and B" when none differ; then an empty line.
[[nodiscard]] std::string run_context_diff_text(const std::vector<context_difference>& differences,
                                                bool markdown);

}  // namespace benchmatrix
