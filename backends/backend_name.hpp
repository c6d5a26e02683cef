// The name reports give a record's backend, from its experiment's dynamo, xla and torch_xla2
// fields — one function, so that aggregate's columns and compare_runs' rows name a backend the same
// way. A backend's name is its descriptor's report_name (backends/backend_registry.hpp).
#pragma once

#include "core/experiment_config.hpp"

#include <optional>
#include <string>

namespace benchmatrix {

/// As aggregate.py names backends, extended to ours: inductor when dynamo is inductor; for
/// xla=PJRT openxla+dynamo (dynamo openxla) or openxla+lazytensor (no dynamo); without xla the
/// dynamo value (cudagraphs, torchscript), eager when dynamo is null (nullopt). A torch_xla2 value
/// names the JAX path whatever xla says: torch_xla2+torch_export (aggregate.py ignored the field
/// and filed those runs under eager or openxla+lazytensor).
/// Throws std::runtime_error for the combinations no report names (xla=XRT, xla=PJRT with another
/// dynamo), as the original's assert does.
[[nodiscard]] std::string report_backend_name(const std::optional<std::string>& dynamo,
                                              const std::optional<std::string>& xla,
                                              const std::optional<std::string>& torch_xla2);

/// report_backend_name, or for the combinations it rejects a name that says what ran
/// ("xla=XRT+openxla", "xla=PJRT+cudagraphs"): for tables that show every record.
[[nodiscard]] std::string display_backend_name(const std::optional<std::string>& dynamo,
                                               const std::optional<std::string>& xla,
                                               const std::optional<std::string>& torch_xla2);

/// The axes of a config beyond its backend, as reports label them (issue 52): "(<mode>)" for an
/// Inductor mode other than default, then "@<precision>" for a precision other than auto; "" at the
/// defaults, so that the reports of default runs read as before.
[[nodiscard]] std::string config_axes_suffix(const experiment_config& experiment);

/// report_backend_name of the config's dynamo, xla and torch_xla2, then config_axes_suffix:
/// "inductor(max-autotune)@bfloat16", "eager@amp", "inductor". Reports key and label rows by it,
/// so that configs of different precisions or modes are never one row.
[[nodiscard]] std::string report_config_backend(const experiment_config& experiment);

/// display_backend_name, then config_axes_suffix.
[[nodiscard]] std::string display_config_backend(const experiment_config& experiment);

}  // namespace benchmatrix
