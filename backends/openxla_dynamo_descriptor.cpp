// openxla+dynamo (xla=PJRT dynamo=openxla): benchmatrix runs it as the whole forward exported by
// torch.export to StableHLO and compiled by a PJRT plugin (backends/xla_pjrt_backend.hpp).
#include "backends/backend_registry.hpp"
#include "backends/pjrt_availability.hpp"

namespace benchmatrix {

const backend_descriptor& openxla_dynamo_descriptor() {
  static const backend_descriptor openxla{
      .report_name = "openxla+dynamo",
      .title = "XLA+Dynamo",
      .identity = {"PJRT", "openxla", std::nullopt},
      .dynamo_choice = dynamo_choice_rules{.position = 2,
                                           .in_default_matrix = true,
                                           .needs_xla = true,
                                           .keeps_model_data_on_cuda = true},
      .unavailable_reason =
          [](const experiment_config& e) {
            return pjrt_export_unavailable_reason(e, "dynamo=openxla");
          },
      .step_factory = "xla_pjrt",
      .counters = {.one_graph = true, .captures = cuda_graph_captures::never},
      .compiles_into_cache = true,
  };
  return openxla;
}

}  // namespace benchmatrix
