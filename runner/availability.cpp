#include "runner/availability.hpp"

#include "runner/host_info.hpp"

namespace benchmatrix {

std::optional<std::string> unavailable_reason(const experiment_config& e) {
  if (e.accelerator == "tpu") return "accelerator=tpu is not supported by benchmatrix";
  if (e.torch_xla2) return "torch_xla2=" + *e.torch_xla2 + " is not supported by benchmatrix";
  if (e.xla) return "xla=" + *e.xla + " is not available in this build (no XLA/PJRT backend yet)";
  if (e.dynamo == "openxla")
    return "dynamo=openxla is not available in this build (no XLA/PJRT backend yet)";
  if (e.dynamo == "cudagraphs" && e.accelerator != "cuda")
    return "dynamo=cudagraphs needs accelerator=cuda (CUDA graphs capture GPU work), got accelerator=" +
           e.accelerator;
  if (e.accelerator == "cuda" && gpu_names().empty())
    return "accelerator=cuda but no CUDA GPU is visible on this host (nvidia-smi lists none)";
  return std::nullopt;
}

}  // namespace benchmatrix
