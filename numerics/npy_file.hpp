// NumPy .npy files, format version 1.0 (numpy.lib.format): the magic, a Python-literal header dict
// ('descr', 'fortran_order': False, 'shape'), padded with spaces and a newline so that the data
// starts at a multiple of 64 bytes, as numpy.save writes it; then the raw C-order data. Torch-free:
// arrays are raw little-endian bytes with a descr ('<f4', '<f8', '<i8', '<i4', '<u2', ...) and a
// shape.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace benchmatrix {

struct npy_array {
  std::string descr;               // numpy's dtype.str, e.g. "<f4"
  std::vector<std::int64_t> shape; // C order; empty: a 0-d array
  std::string data;                // element_count() * item size bytes, C order, little-endian

  [[nodiscard]] std::int64_t element_count() const;
};

/// The item size a descr names ("<f4" → 4); throws std::invalid_argument for one we do not handle
/// (big-endian, structured, object or string dtypes).
[[nodiscard]] std::size_t npy_item_size(std::string_view descr);

/// The complete header (magic, version 1.0, length, padded dict) numpy.save writes for this array.
[[nodiscard]] std::string npy_header(std::string_view descr,
                                     const std::vector<std::int64_t>& shape);

/// Writes header + data; throws std::runtime_error naming the path when it cannot, or when the data
/// size does not match the shape and descr.
void write_npy(const std::filesystem::path& path, std::string_view descr,
               const std::vector<std::int64_t>& shape, std::string_view data);

/// Reads a version 1.0 or 2.0 file in C order. Throws std::runtime_error naming the path and what
/// is wrong (not an .npy file, Fortran order, truncated data, unsupported dtype).
[[nodiscard]] npy_array read_npy(const std::filesystem::path& path);

} // namespace benchmatrix
