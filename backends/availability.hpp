// Which valid experiment configs this build can run on this host. A config that cannot run gets a
// SKIP record with the reason (never silently dropped). Backends give their own reasons in their
// descriptors (backends/backend_registry.hpp); this file adds the host's and those of configs no
// backend runs.
#pragma once

#include "core/experiment_config.hpp"

#include <optional>
#include <string>

namespace benchmatrix {

/// nullopt: runnable here; otherwise the reason, e.g. "no CUDA GPU visible on this host".
[[nodiscard]] std::optional<std::string> unavailable_reason(const experiment_config& experiment);

}  // namespace benchmatrix
