// Why the whole-graph XLA path (torch.export -> StableHLO -> a PJRT plugin; openxla+dynamo and
// torch_xla2+torch_export) cannot run a config here: the reasons both of its descriptors give.
#pragma once

#include "core/experiment_config.hpp"

#include <optional>
#include <string>

namespace benchmatrix {

/// nullopt when the export path can run `experiment`; `selected_by` names the field that chose it
/// in the train reason ("dynamo=openxla", "torch_xla2=torch_export"). Reads
/// BENCHMATRIX_PJRT_PLUGIN and BENCHMATRIX_XLA_EXPORT_ONLY.
[[nodiscard]] std::optional<std::string>
pjrt_export_unavailable_reason(const experiment_config& experiment, const std::string& selected_by);

}  // namespace benchmatrix
