#include "backends/pjrt_availability.hpp"

#include <cstdlib>

namespace benchmatrix {

std::optional<std::string> pjrt_export_unavailable_reason(const experiment_config& e,
                                                          const std::string& selected_by) {
  // The joint train step runs as dynamo=openxla; torch_xla2=torch_export is the forward's export.
  if (e.test == "train" && e.dynamo != "openxla")
    return "xla=PJRT " + selected_by +
           " exports the forward only; benchmatrix runs the train step's StableHLO as xla=PJRT "
           "dynamo=openxla";
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
  return std::nullopt;
}

}  // namespace benchmatrix
