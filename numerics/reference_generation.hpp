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
  /// TF32 for float32 cuDNN convolutions and CUDA matmuls. Off by default, as the seed's generator
  /// sets it (LibTorch's own default lets cuDNN use TF32, about 10 mantissa bits, for "golden"
  /// float32 conv2d outputs).
  bool allow_tf32 = false;
};

/// Writes the data set: system_info.json, config.json, README.md, then one case at a time (dtype by
/// dtype, ic by ic: draw on the CPU generator, move to the device, compute, write, free), logging
/// progress. TF32 is set for the whole process as options.allow_tf32 says, and system_info.json
/// records the flags in effect. CUDA asked for and absent: a warning, then the CPU. Throws std::invalid_argument for a
/// bad device or ic, std::runtime_error when a file cannot be written.
void generate_reference_outputs(const generate_options& options);

/// SHA-256 of each input tensor ("conv2d/input", ...) drawn again on the CPU as generation draws
/// it.
[[nodiscard]] std::map<std::string, std::string>
regenerated_input_hashes(const reference_config& config, const std::string& dtype, std::int64_t ic);

} // namespace benchmatrix
