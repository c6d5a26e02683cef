// Which valid experiment configs this build can run on this host. A config that cannot run gets a
// SKIP record with the reason (never silently dropped). The one place to extend when a backend lands.
#pragma once

#include "core/experiment_config.hpp"

#include <optional>
#include <string>

namespace benchmatrix {

/// Whether the config is the whole-graph XLA path: torch.export -> StableHLO -> a PJRT plugin.
/// xla=PJRT with dynamo=openxla, or with torch_xla2=torch_export (the same program, no dynamo).
[[nodiscard]] bool runs_pjrt_export(const experiment_config& experiment);

/// nullopt: runnable here; otherwise the reason, e.g. "no CUDA GPU visible on this host".
[[nodiscard]] std::optional<std::string> unavailable_reason(const experiment_config& experiment);

}  // namespace benchmatrix
