// Inductor (dynamo=inductor, xla=None): the traced graph compiled ahead of time by AOTInductor
// (backends/inductor_backend.hpp).
#include "backends/backend_registry.hpp"

namespace benchmatrix {

const backend_descriptor& inductor_descriptor() {
  static const backend_descriptor inductor{
      .report_name = "inductor",
      .title = "Inductor",
      .identity = {std::nullopt, "inductor", std::nullopt},
      .dynamo_choice = dynamo_choice_rules{.position = 1,
                                           .in_default_matrix = true,
                                           .needs_xla = false,
                                           .keeps_model_data_on_cuda = false},
      .unavailable_reason = {},
      .step_factory = "inductor",
      // its package runs as CUDA graphs on CUDA (backends/inductor_backend.cpp)
      .counters = {.one_graph = true, .captures = cuda_graph_captures::on_cuda},
      .compiles_into_cache = true,
      .compiles_exported_programs = true,  // backends/inductor_backend.cpp's package_recipe
  };
  return inductor;
}

}  // namespace benchmatrix
