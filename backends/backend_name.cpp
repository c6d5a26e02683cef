#include "backends/backend_name.hpp"

#include "backends/backend_registry.hpp"

#include <stdexcept>

namespace benchmatrix {

std::string report_backend_name(const std::optional<std::string>& dynamo,
                                const std::optional<std::string>& xla,
                                const std::optional<std::string>& torch_xla2) {
  if (const backend_descriptor* backend = find_backend(xla, dynamo, torch_xla2))
    return backend->report_name;
  // Records no backend of ours selects, named by aggregate.py's rules (it tests dynamo=inductor
  // before xla).
  if (torch_xla2) return "torch_xla2+" + *torch_xla2;
  if (dynamo == "inductor") return "inductor";
  if (xla) {
    if (*xla != "PJRT") throw std::runtime_error("xla=" + *xla + " is not a reported backend");
    throw std::runtime_error("xla=PJRT with dynamo=" + dynamo.value_or("None") +
                             " is not a reported backend");
  }
  return dynamo.value_or("eager");
}

std::string display_backend_name(const std::optional<std::string>& dynamo,
                                 const std::optional<std::string>& xla,
                                 const std::optional<std::string>& torch_xla2) {
  try {
    return report_backend_name(dynamo, xla, torch_xla2);
  } catch (const std::runtime_error&) {
    return "xla=" + xla.value_or("None") + (dynamo ? "+" + *dynamo : "");
  }
}

}  // namespace benchmatrix
