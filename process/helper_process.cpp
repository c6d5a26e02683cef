#include "process/helper_process.hpp"

#include "core/text_file.hpp"

#include <chrono>
#include <optional>
#include <stdexcept>

namespace benchmatrix {

/// Bytes of a helper's output kept for error records (the tail, where a traceback ends).
constexpr std::uintmax_t output_tail_bytes = 4000;

helper_result run_helper(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& environment,
                         const std::filesystem::path& log_path) {
  if (argv.empty()) throw std::runtime_error("cannot run a helper: empty command line");
  std::optional<child_process> helper;
  try {
    helper.emplace(argv, environment, log_path, log_path, process_group::caller);
  } catch (const launch_error& e) {
    throw std::runtime_error("cannot start " + e.program + ": " + e.reason);
  }
  helper_result result;
  result.exit = helper->wait();  // waitpid: reports signals as well as exit codes
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - helper->started()).count();
  result.output_tail = read_file_tail(log_path, output_tail_bytes, "its output");
  return result;
}

}  // namespace benchmatrix
