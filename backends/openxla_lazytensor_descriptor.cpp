// openxla+lazytensor (xla=PJRT, dynamo=None): PyTorch/XLA's lazy tensor mode, a backend of
// aggregate.py that benchmatrix names in reports but never runs (every config is a SKIP record).
#include "backends/backend_registry.hpp"

namespace benchmatrix {

const backend_descriptor& openxla_lazytensor_descriptor() {
  static const backend_descriptor lazytensor{
      .report_name = "openxla+lazytensor",
      .title = "XLA+LazyTensor",
      .identity = {"PJRT", std::nullopt, std::nullopt},
      .dynamo_choice = std::nullopt,
      .unavailable_reason = [](const experiment_config&) -> std::optional<std::string> {
        return "xla=PJRT with dynamo=None is PyTorch/XLA's lazy tensor mode, which benchmatrix "
               "does "
               "not emulate; xla=PJRT dynamo=openxla compiles the whole forward with XLA";
      },
      .step_factory = "",
      .counters = {},
  };
  return lazytensor;
}

}  // namespace benchmatrix
