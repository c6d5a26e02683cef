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

std::string config_axes_suffix(const experiment_config& experiment) {
  std::string suffix;
  if (experiment.inductor_mode != default_inductor_mode) suffix += "(" + experiment.inductor_mode + ")";
  if (experiment.precision != default_precision) suffix += "@" + experiment.precision;
  return suffix;
}

std::string report_config_backend(const experiment_config& e) {
  return report_backend_name(e.dynamo, e.xla, e.torch_xla2) + config_axes_suffix(e);
}

std::string display_config_backend(const experiment_config& e) {
  return display_backend_name(e.dynamo, e.xla, e.torch_xla2) + config_axes_suffix(e);
}

}  // namespace benchmatrix
