// The environment a sweep's child runs in: the parent's, plus what its config and GPU ask for.
#pragma once

#include "core/experiment_config.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace benchmatrix {

/// The child's environment: ours plus the XLA variables of §3.4 (with `xla_dump_dir`, --dump-hlo's
/// `--xla_dump_to=<dir>` appended to XLA_FLAGS, as the original's parent does) and, with --devices,
/// its GPU: CUDA_VISIBLE_DEVICES in nvidia-smi's numbering (PCI bus order). Everything else the
/// child needs is in its job file.
[[nodiscard]] std::map<std::string, std::string>
child_environment(const experiment_config& e, const std::optional<std::string>& device,
                  const std::optional<std::filesystem::path>& xla_dump_dir);

} // namespace benchmatrix
