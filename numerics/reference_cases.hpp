// The reference-outputs data set (reference/kernel_evals.md §4, seed 004): its fixed configuration,
// its folder layout, its JSON files, and the loader API (list cases, load a case, check hashes).
// Torch-free; drawing inputs and computing outputs is numerics/reference_generation.hpp.
//
//   DIR/system_info.json  DIR/config.json  DIR/README.md
//   DIR/<dtype>/k<K:04>_ic<ic:03>_{conv2d_input,conv2d_weight,conv2d_bias,conv2d_output,
//                                   matmul_A,matmul_B,matmul_output}.npy  ..._metadata.json
//
// Every .npy holds float32 ('<f4'); bfloat16 tensors are widened exactly. Input hashes are SHA-256
// of those float32 bytes (C order, little-endian, no shape), so they equal hashlib.sha256 of the
// data numpy.load gives.
#pragma once

#include "core/python_json.hpp"
#include "numerics/npy_file.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace benchmatrix {

struct reference_config {
  std::int64_t seed = 42;
  std::int64_t batch = 1;
  std::int64_t input_height = 32;
  std::int64_t input_width = 32;
  std::int64_t out_channels = 32;
  std::int64_t kernel_h = 3;
  std::int64_t kernel_w = 3;
  std::int64_t padding_h = 1, padding_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  bool use_bias = true;
  std::vector<std::string> dtypes{"bfloat16", "float32"};
  std::vector<std::int64_t> input_channels_sweep{8,    16,   32,   64,   128,  256,  512, 1024,
                                                 2048, 3072, 4096, 5120, 6144, 7168, 8192};

  [[nodiscard]] std::int64_t k(std::int64_t ic) const { return ic * kernel_h * kernel_w; }
  [[nodiscard]] std::int64_t output_height() const;
  [[nodiscard]] std::int64_t output_width() const;
  /// The matmul of "matching" shape (§4.3): M = batch·OH·OW, K = ic·kh·kw, N = out_channels.
  [[nodiscard]] std::int64_t m() const { return batch * output_height() * output_width(); }
};

/// The tensors of a case, in the order they are drawn: "conv2d/input", "conv2d/weight",
/// "conv2d/bias", then "matmul/A", "matmul/B" (the generator is re-seeded before matmul/A).
[[nodiscard]] const std::vector<std::string>& reference_input_names();
/// "conv2d/output", "matmul/output".
[[nodiscard]] const std::vector<std::string>& reference_output_names();
/// The shape of every input and output tensor of the case with `ic` input channels.
[[nodiscard]] std::map<std::string, std::vector<std::int64_t>>
reference_shapes(const reference_config& config, std::int64_t ic);

struct reference_case {
  std::string dtype; // "bfloat16" | "float32"
  std::int64_t input_channels = 0;
  std::int64_t k = 0;
};

/// "k0072_ic008" (the widths are minimums: "k73728_ic8192").
[[nodiscard]] std::string case_prefix(const reference_case& c);
/// DIR/<dtype>/<prefix>_<op>_<name>.npy for a tensor name such as "conv2d/input".
[[nodiscard]] std::filesystem::path tensor_path(const std::filesystem::path& dir,
                                                const reference_case& c, const std::string& tensor);
[[nodiscard]] std::filesystem::path metadata_path(const std::filesystem::path& dir,
                                                  const reference_case& c);

[[nodiscard]] std::string config_json(const reference_config& config);
/// Reads DIR/config.json. Throws std::runtime_error naming the file when it is missing or
/// malformed.
[[nodiscard]] reference_config read_reference_config(const std::filesystem::path& dir);

/// The metadata of one case: shapes, dtypes ("torch.bfloat16"), gen_method, input_hashes (as the
/// seed), plus output_hashes, seed, input_generator ("cpu") and device.
[[nodiscard]] std::string case_metadata_json(const reference_config& config,
                                             const reference_case& c,
                                             const std::map<std::string, std::string>& hashes,
                                             const std::string& device);

/// The generated README.md of a data set.
[[nodiscard]] std::string reference_readme(const reference_config& config);

/// Cases present in DIR (a metadata file for one of config.json's dtypes), by dtype then ic.
/// Throws std::runtime_error when DIR or its config.json is missing.
[[nodiscard]] std::vector<reference_case> list_reference_cases(const std::filesystem::path& dir);

struct loaded_reference_case {
  reference_case id;
  json_document metadata;
  std::map<std::string, npy_array> tensors; // every input and output, by name ("matmul/A")
};

/// Loads a case's metadata and its seven arrays, checking each array's dtype ('<f4') and shape
/// against the metadata. Throws std::runtime_error naming the file and what is wrong.
[[nodiscard]] loaded_reference_case load_reference_case(const std::filesystem::path& dir,
                                                        const std::string& dtype, std::int64_t ic);

struct hash_check {
  std::string tensor;           // "conv2d/input"
  std::string expected;         // the metadata's hash
  std::string file_hash;        // of the .npy's data
  std::string regenerated_hash; // of the regenerated tensor; "" when not regenerated (outputs)
  [[nodiscard]] bool passed() const {
    return file_hash == expected && (regenerated_hash.empty() || regenerated_hash == expected);
  }
};

/// Checks every input's (and, where the metadata has output_hashes, every output's) file data
/// against the metadata, and each input's regenerated hash (`regenerated`, by tensor name) too.
[[nodiscard]] std::vector<hash_check>
check_reference_hashes(const loaded_reference_case& loaded,
                       const std::map<std::string, std::string>& regenerated);

} // namespace benchmatrix
