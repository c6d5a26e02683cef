// Drawing the reference inputs and computing the reference outputs with LibTorch (the one torch
// translation unit of reference_outputs; the header is torch-free).
#pragma once

#include "numerics/reference_cases.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace benchmatrix {

struct generate_options {
  std::filesystem::path out_dir = "torch_reference_outputs";
  std::string device = "cpu";               // cpu | cuda | cuda:N
  std::vector<std::int64_t> input_channels; // empty: the seed's whole sweep
};

/// Writes the data set: system_info.json, config.json, README.md, then one case at a time (dtype by
/// dtype, ic by ic: draw on the CPU generator, move to the device, compute, write, free), logging
/// progress. CUDA asked for and absent: a warning, then the CPU. Throws std::invalid_argument for a
/// bad device or ic, std::runtime_error when a file cannot be written.
void generate_reference_outputs(const generate_options& options);

/// SHA-256 of each input tensor ("conv2d/input", ...) drawn again on the CPU as generation draws
/// it.
[[nodiscard]] std::map<std::string, std::string>
regenerated_input_hashes(const reference_config& config, const std::string& dtype, std::int64_t ic);

} // namespace benchmatrix
