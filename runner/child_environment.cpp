#include "runner/child_environment.hpp"

#include "process/child_process.hpp"

namespace benchmatrix {

std::map<std::string, std::string>
child_environment(const experiment_config& e, const std::optional<std::string>& device,
                  const std::optional<std::filesystem::path>& xla_dump_dir) {
  auto env = current_environment();
  if (device) {
    env["CUDA_VISIBLE_DEVICES"] = *device;
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  }
  if (e.xla) {
    env.erase("PJRT_DEVICE");
    env.erase("XRT_TPU_CONFIG");
    env.erase("XLA_FLAGS");
  }
  if (e.xla_flags)
    env["XLA_FLAGS"] = *e.xla_flags;
  if (xla_dump_dir) {
    auto& flags = env["XLA_FLAGS"];
    flags += (flags.empty() ? "" : " ") + std::string("--xla_dump_to=") + xla_dump_dir->string();
  }
  if (!e.enable_functionalization)
    env["XLA_DISABLE_FUNCTIONALIZATION"] = "1";
  return env;
}

} // namespace benchmatrix
