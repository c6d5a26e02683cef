// Eager: the model's own forward (xla=None, dynamo=None); the baseline of speedups and accuracy.
#include "backends/backend_registry.hpp"

namespace benchmatrix {

const backend_descriptor& eager_descriptor() {
  static const backend_descriptor eager{
      .report_name = "eager",
      .title = "Eager",
      .identity = {std::nullopt, std::nullopt, std::nullopt},
      .dynamo_choice = std::nullopt,
      .unavailable_reason = {},
      .step_factory = "eager",
      .counters = {.one_graph = false, .captures = cuda_graph_captures::never},
  };
  return eager;
}

}  // namespace benchmatrix
