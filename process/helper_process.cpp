#include "process/helper_process.hpp"

#include "core/text_file.hpp"

#include <boost/process.hpp>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace bp = boost::process;

namespace benchmatrix {

/// Bytes of a helper's output kept for error records (the tail, where a traceback ends).
constexpr std::uintmax_t output_tail_bytes = 4000;

helper_result run_helper(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& environment,
                         const std::filesystem::path& log_path) {
  if (argv.empty()) throw std::runtime_error("cannot run a helper: empty command line");
  bp::environment env;
  for (const auto& [key, value] : environment) env[key] = value;
  const std::vector<std::string> args(argv.begin() + 1, argv.end());
  const auto started = std::chrono::steady_clock::now();
  int pid = -1;
  try {
    bp::child child(bp::exe = argv.front(), bp::args = args, env, bp::std_in < bp::null,
                    (bp::std_out & bp::std_err) > log_path.string());
    pid = child.id();
    child.detach();  // reaped below with waitpid, which reports signals as well as exit codes
  } catch (const bp::process_error& e) {
    throw std::runtime_error("cannot start " + argv.front() + ": " + e.what());
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  helper_result result;
  result.exit = child_exit::from_wait_status(status);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.output_tail = read_file_tail(log_path, output_tail_bytes, "its output");
  return result;
}

}  // namespace benchmatrix
