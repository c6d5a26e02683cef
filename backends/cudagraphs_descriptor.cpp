// CUDA graphs (dynamo=cudagraphs, xla=None): benchmatrix's own, the whole step captured once and
// replayed (backends/cudagraphs_backend.hpp). CUDA only.
#include "backends/backend_registry.hpp"

namespace benchmatrix {

const backend_descriptor& cudagraphs_descriptor() {
  static const backend_descriptor cudagraphs{
      .report_name = "cudagraphs",
      .title = "CUDAGraphs",
      .identity = {std::nullopt, "cudagraphs", std::nullopt},
      .dynamo_choice = dynamo_choice_rules{.position = 4,
                                           .in_default_matrix = false,
                                           .needs_xla = false,
                                           .keeps_model_data_on_cuda = false},
      .unavailable_reason = [](const experiment_config& e) -> std::optional<std::string> {
        if (e.accelerator != "cuda")
          return "dynamo=cudagraphs needs accelerator=cuda (CUDA graphs capture GPU work), got "
                 "accelerator=" +
                 e.accelerator;
        return std::nullopt;
      },
      .step_factory = "cudagraphs",
      .counters = {.one_graph = true, .captures = cuda_graph_captures::always},
  };
  return cudagraphs;
}

}  // namespace benchmatrix
