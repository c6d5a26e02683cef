// TorchScript (dynamo=torchscript, xla=None): benchmatrix's own, the traced graph run by the
// TorchScript interpreter (backends/torchscript_backend.hpp).
#include "backends/backend_registry.hpp"

namespace benchmatrix {

const backend_descriptor& torchscript_descriptor() {
  static const backend_descriptor torchscript{
      .report_name = "torchscript",
      .title = "TorchScript",
      .identity = {std::nullopt, "torchscript", std::nullopt},
      .dynamo_choice = dynamo_choice_rules{.position = 3,
                                           .in_default_matrix = false,
                                           .needs_xla = false,
                                           .keeps_model_data_on_cuda = false},
      .unavailable_reason = {},
      .step_factory = "torchscript",
      .counters = {.one_graph = true, .captures = cuda_graph_captures::never},
  };
  return torchscript;
}

}  // namespace benchmatrix
