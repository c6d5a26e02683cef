#include "backends/backend_name.hpp"

#include <stdexcept>

namespace benchmatrix {

std::string report_backend_name(const std::optional<std::string>& dynamo,
                                const std::optional<std::string>& xla,
                                const std::optional<std::string>& torch_xla2) {
  if (torch_xla2) return "torch_xla2+" + *torch_xla2;
  if (dynamo == "inductor") return "inductor";
  if (xla) {
    if (*xla != "PJRT") throw std::runtime_error("xla=" + *xla + " is not a reported backend");
    if (dynamo && *dynamo != "openxla")
      throw std::runtime_error("xla=PJRT with dynamo=" + *dynamo + " is not a reported backend");
    return dynamo ? "openxla+dynamo" : "openxla+lazytensor";
  }
  return dynamo ? *dynamo : "eager";
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
