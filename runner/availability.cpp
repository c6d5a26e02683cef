#include "runner/availability.hpp"

#include "runner/host_info.hpp"

namespace benchmatrix {

std::optional<std::string> unavailable_reason(const experiment_config& e) {
  if (e.accelerator == "tpu") return "accelerator=tpu is not supported by benchmatrix";
  if (e.torch_xla2) return "torch_xla2=" + *e.torch_xla2 + " is not supported by benchmatrix";
  if (e.xla) return "xla=" + *e.xla + " is not available in this build (no XLA/PJRT backend yet)";
  if (e.dynamo)
    return "dynamo=" + *e.dynamo + " is not available in this build (backends: eager only)";
  if (e.accelerator == "cuda" && gpu_names().empty())
    return "accelerator=cuda but no CUDA GPU is visible on this host (nvidia-smi lists none)";
  return std::nullopt;
}

}  // namespace benchmatrix
