// Per-config file names for dumps and saved outputs (shared/reference/xla_runner.md §8.1), with a
// stable hash where the original used Python's per-process salted hash().
#pragma once

#include "core/experiment_config.hpp"

#include <filesystem>
#include <string>

namespace benchmatrix {

/// "-".join of str(value) (spaces removed) for the experiment config's items sorted by key, then the
/// model's (model_name); values longer than 32 characters become "0x" + the first 16 hex digits of
/// their SHA-256. E.g. "cpu-None-False-False-eval-None-None-None-dummy".
[[nodiscard]] std::string unique_basename(const experiment_config& experiment,
                                          const std::string& model_name);

/// <output_dir>/<model>[/<sub_dir>]/<partial>-<basename>[.<ext>], directories created.
[[nodiscard]] std::filesystem::path results_file_path(const std::filesystem::path& output_dir,
                                                      const experiment_config& experiment,
                                                      const std::string& model_name,
                                                      const std::string& sub_dir,
                                                      const std::string& partial,
                                                      const std::string& extension);

/// <output_dir>/<model>/hlo-<basename>/ (created): --dump-hlo's directory — AOTInductor's sources,
/// or XLA's own dumps, which the parent points XLA_FLAGS' --xla_dump_to at.
[[nodiscard]] std::filesystem::path hlo_dump_directory(const std::filesystem::path& output_dir,
                                                       const experiment_config& experiment,
                                                       const std::string& model_name);

}  // namespace benchmatrix
