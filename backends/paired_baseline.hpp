// --paired-baseline (issue 24, core/paired_speedups.hpp): which backends can be the baseline a
// timing child runs alternately with the config's own backend, and the baseline's config for one
// config. Torch-free: the parent decides with it which configs run paired, the child which step
// it builds for the baseline.
#pragma once

#include "core/experiment_config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

/// --paired-baseline's choices: "eager", then the --dynamo values of the backends that run without
/// an XLA runtime (inductor, torchscript, cudagraphs, ...). XLA backends are not offered: the
/// record's xla_* metrics count the XLA runtime's work per repeat, which a second XLA step in the
/// same repeat would mix into the experiment's.
[[nodiscard]] std::vector<std::string> paired_baseline_choices();

/// The config `baseline` (one of paired_baseline_choices) runs as beside `experiment`: the same
/// accelerator, test and functionalization, dynamo the baseline's (null for eager), no XLA
/// runtime, XLA flags or torch_xla2. nullopt when `experiment`'s own backend is the baseline: that
/// config runs unpaired. Throws std::invalid_argument naming the choices for another name.
[[nodiscard]] std::optional<experiment_config>
paired_baseline_experiment(const experiment_config& experiment, const std::string& baseline);

}  // namespace benchmatrix
