#include "backends/availability.hpp"

#include "backends/backend_registry.hpp"
#include "core/host_info.hpp"

namespace benchmatrix {

std::optional<std::string> unavailable_reason(const experiment_config& e) {
  if (e.accelerator == "tpu") return "accelerator=tpu is not supported by benchmatrix";
  if (e.torch_xla2 == "extract_jax")
    return "torch_xla2=extract_jax runs a Python nn.Module under torchax's tensor subclass; "
           "benchmatrix's models are C++ (their traced graph goes through torch.export): use "
           "--torch-xla2=torch_export, the same JAX/XLA program";
  if (e.torch_xla2 && !e.xla)
    return "torch_xla2=" + *e.torch_xla2 + " with xla=None: the original never waits for the "
           "device on this path (its _sync has nothing to block on), so its timings measure "
           "dispatch only; benchmatrix runs torch_xla2 with xla=PJRT";
  if (const backend_descriptor* backend = find_backend(e)) {
    if (backend->unavailable_reason)
      if (auto reason = backend->unavailable_reason(e)) return reason;
  } else if (e.xla) {
    return "xla=" + *e.xla + " is not available in this build (benchmatrix runs xla=PJRT with "
           "dynamo=openxla)";
  }
  if (e.accelerator == "cuda" && gpu_names().empty())
    return "accelerator=cuda but no CUDA GPU is visible on this host (nvidia-smi lists none)";
  return std::nullopt;
}

}  // namespace benchmatrix
