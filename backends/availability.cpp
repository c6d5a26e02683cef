#include "backends/availability.hpp"

#include "core/host_info.hpp"

#include <cstdlib>

namespace benchmatrix {

bool runs_pjrt_export(const experiment_config& e) {
  return e.xla == "PJRT" && ((e.dynamo == "openxla" && !e.torch_xla2) ||
                             (e.torch_xla2 == "torch_export" && !e.dynamo));
}

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
  if (e.xla == "PJRT" && !e.dynamo && !e.torch_xla2)
    return "xla=PJRT with dynamo=None is PyTorch/XLA's lazy tensor mode, which benchmatrix does not "
           "emulate; xla=PJRT dynamo=openxla compiles the whole forward with XLA";
  if (runs_pjrt_export(e)) {
    if (e.test == "train")
      return "xla=PJRT " + std::string(e.torch_xla2 ? "torch_xla2=torch_export" : "dynamo=openxla") +
             " compiles the forward exported by torch.export, which gives no backward; benchmatrix "
             "runs it for test=eval";
    const char* plugin = std::getenv("BENCHMATRIX_PJRT_PLUGIN");
    const char* export_only = std::getenv("BENCHMATRIX_XLA_EXPORT_ONLY");
    const bool exporting = export_only && *export_only && std::string(export_only) != "0";
    if (e.accelerator == "cpu" && !(plugin && *plugin) && !exporting)
      return "xla=PJRT is not available on accelerator=cpu: no PJRT C API plugin for the CPU ships "
             "with JAX (its CPU client is inside jaxlib); set BENCHMATRIX_PJRT_PLUGIN to one, or "
             "BENCHMATRIX_XLA_EXPORT_ONLY=1 to only export the StableHLO module";
#ifndef BENCHMATRIX_HAVE_PJRT
    if (!exporting)
      return "xla=PJRT is not available in this build: it has no PJRT C API header "
             "(xla/pjrt/c/pjrt_c_api.h); run scripts/fetch_pjrt_header.sh and reconfigure";
#endif
  } else if (e.xla) {
    return "xla=" + *e.xla + " is not available in this build (benchmatrix runs xla=PJRT with "
           "dynamo=openxla)";
  }
  if (e.dynamo == "cudagraphs" && e.accelerator != "cuda")
    return "dynamo=cudagraphs needs accelerator=cuda (CUDA graphs capture GPU work), got accelerator=" +
           e.accelerator;
  if (e.accelerator == "cuda" && gpu_names().empty())
    return "accelerator=cuda but no CUDA GPU is visible on this host (nvidia-smi lists none)";
  return std::nullopt;
}

}  // namespace benchmatrix
