// One output leaf of the custom module against the reference's, from the .npy files the evaluation
// child wrote (torch-free): shape and dtype must agree; then per element, as torch.allclose,
// |custom - ref| <= atol + rtol * |ref| (NaN never matches), with max and mean |custom - ref|.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace benchmatrix {

struct leaf_comparison {
  std::vector<std::int64_t> ref_shape, custom_shape;
  std::string ref_dtype, custom_dtype;
  std::int64_t elements = 0;
  std::int64_t mismatches = 0;  // elements outside the tolerance
  double max_abs_diff = 0;      // NaN when a NaN was compared
  double mean_abs_diff = 0;
  std::string issue;            // "" when the leaf matches; else why not (shape, dtype, values)
  [[nodiscard]] bool passed() const { return issue.empty(); }
};

/// Compares two .npy files (float, integer and bool dtypes; half/bfloat16 arrive widened to float32,
/// `ref_dtype`/`custom_dtype` name the original dtypes). Throws std::runtime_error on unreadable files.
[[nodiscard]] leaf_comparison compare_leaf(const std::filesystem::path& ref_file,
                                           const std::string& ref_dtype,
                                           const std::filesystem::path& custom_file,
                                           const std::string& custom_dtype, double atol,
                                           double rtol);

[[nodiscard]] std::string shape_text(const std::vector<std::int64_t>& shape);

}  // namespace benchmatrix
