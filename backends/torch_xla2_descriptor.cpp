// torch_xla2+torch_export (xla=PJRT torch_xla2=torch_export): the same StableHLO program as
// openxla+dynamo without dynamo, run by the same step (backends/xla_pjrt_backend.hpp).
#include "backends/backend_registry.hpp"
#include "backends/pjrt_availability.hpp"

namespace benchmatrix {

const backend_descriptor& torch_xla2_torch_export_descriptor() {
  static const backend_descriptor torch_export{
      .report_name = "torch_xla2+torch_export",
      .title = "torch_xla2 (torch.export)",
      .identity = {"PJRT", std::nullopt, "torch_export"},
      .dynamo_choice = std::nullopt,
      .unavailable_reason =
          [](const experiment_config& e) {
            return pjrt_export_unavailable_reason(e, "torch_xla2=torch_export");
          },
      .step_factory = "xla_pjrt",
      // as its counters have always read: no dynamo value, so no graph counted (openxla+dynamo
      // counts its one)
      .counters = {.one_graph = false, .captures = cuda_graph_captures::never},
      .compiles_into_cache = true,
  };
  return torch_export;
}

}  // namespace benchmatrix
