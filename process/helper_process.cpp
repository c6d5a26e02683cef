#include "process/helper_process.hpp"

#include "core/log.hpp"
#include "core/text_file.hpp"
#include "process/helper_service.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// The helper's result from the compile service named by BENCHMATRIX_HELPER_SERVICE, when argv is
/// `<python> -m <module> ...` and the service ran it; nullopt when the caller must run it itself
/// (no service, another kind of command, or the service unreachable or refusing: one warning).
std::optional<helper_result> served(const std::vector<std::string>& argv,
                                    const std::map<std::string, std::string>& environment,
                                    const std::filesystem::path& log_path) {
  const char* socket = std::getenv(helper_service_variable);
  if (!socket || !*socket || argv.size() < 3 || argv[1] != "-m") return std::nullopt;
  auto outcome = run_in_service(socket, argv[0], argv[2],
                                std::vector<std::string>(argv.begin() + 3, argv.end()),
                                environment, log_path);
  if (outcome.result) return outcome.result;
  static std::atomic<bool> warned{false};  // once per process: every later helper runs the same
  if (!warned.exchange(true))
    log_warning(outcome.unserved_reason + "; running " + argv[2] + " as a process of its own");
  return std::nullopt;
}

}  // namespace

helper_result run_helper(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& environment,
                         const std::filesystem::path& log_path) {
  if (argv.empty()) throw std::runtime_error("cannot run a helper: empty command line");
  helper_result result;
  if (auto in_service = served(argv, environment, log_path)) {
    result = std::move(*in_service);
  } else {
    std::optional<child_process> helper;
    try {
      helper.emplace(argv, environment, log_path, log_path, process_group::caller);
    } catch (const launch_error& e) {
      throw std::runtime_error("cannot start " + e.program + ": " + e.reason);
    }
    result.exit = helper->wait();  // waitpid: reports signals as well as exit codes
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                   helper->started())
                         .count();
  }
  result.output_tail = read_file_tail(log_path, helper_output_tail_bytes, "its output");
  return result;
}

}  // namespace benchmatrix
