#include "runner/child_start.hpp"

#include "core/argparse.hpp"
#include "process/child_process.hpp"
#include "process/forked_child.hpp"

#include <cstdlib>
#include <map>
#include <string>

namespace benchmatrix {
namespace {

/// The variables runner/child_environment.cpp sets that only PJRT and torch_xla read: a child
/// without XLA never reads them, so setting them after the fork is as good as before the load.
bool read_by_xla_only(const std::string& key) {
  return key == "XLA_DISABLE_FUNCTIONALIZATION" || key == "XLA_FLAGS" || key == "PJRT_DEVICE" ||
         key == "XRT_TPU_CONFIG";
}

/// `environment` without the variables only XLA reads.
std::map<std::string, std::string> without_xla_variables(std::map<std::string, std::string> environment) {
  std::erase_if(environment, [](const auto& entry) { return read_by_xla_only(entry.first); });
  return environment;
}

}  // namespace

child_start child_start_choice() {
  const char* value = std::getenv("BENCHMATRIX_CHILD_START");
  if (!value || !*value || std::string(value) == "fork") return child_start::fork;
  if (std::string(value) == "exec") return child_start::exec;
  throw usage_error(std::string("BENCHMATRIX_CHILD_START=") + value +
                    ": expected fork (the default: CPU children start as forks of the sweep) or "
                    "exec (every child exec'd)");
}

std::optional<std::string>
fork_start_refusal(const experiment_config& experiment,
                   const std::map<std::string, std::string>& environment) {
  if (child_start_choice() == child_start::exec) return "BENCHMATRIX_CHILD_START=exec";
  if (experiment.accelerator != "cpu") return "a " + experiment.accelerator + " child";
  if (experiment.xla) return "an XLA child";
  if (without_xla_variables(environment) != without_xla_variables(current_environment()))
    return "its environment differs from the sweep's beyond XLA's variables";
  return fork_start_unsafe_reason();
}

}  // namespace benchmatrix
