// .npy v1.0 files (numerics/npy_file.hpp): headers byte-identical to numpy 2.4.6's np.save, e.g.
// np.save(f, np.zeros((1, 8, 32, 32), '<f4')) writes b"\x93NUMPY\x01\x00v\x00{'descr': '<f4',
// 'fortran_order': False, 'shape': (1, 8, 32, 32), }" + spaces + b"\n" (128 bytes in all). The
// end-to-end test loads the generated files with numpy.load itself.
#include "numerics/npy_file.hpp"

#include <cstdio>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

using namespace benchmatrix;

namespace {

std::string numpy_header(const std::string& dict) {
  std::string h = std::string("\x93NUMPY\x01\x00v\x00", 10) + dict;
  h.append(127 - h.size(), ' ');
  return h + "\n";
}

} // namespace

TEST_CASE("headers as numpy.save writes them") {
  CHECK(npy_header("<f4", {1, 8, 32, 32}) ==
        numpy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 8, 32, 32), }"));
  CHECK(npy_header("<f4", {5}) ==
        numpy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"));
  CHECK(npy_header("<i8", {}) ==
        numpy_header("{'descr': '<i8', 'fortran_order': False, 'shape': (), }"));
  CHECK(npy_header("<f4", {2, 3}).size() % 64 == 0);
}

TEST_CASE("write, read back, and refuse bad files") {
  const auto path = std::filesystem::temp_directory_path() / "benchmatrix-npy-test.npy";
  const float values[6] = {1, 2, 3, 4, 5, 6};
  write_npy(path, "<f4", {2, 3},
            std::string_view(reinterpret_cast<const char*>(values), sizeof values));
  const npy_array a = read_npy(path);
  CHECK(a.descr == "<f4");
  CHECK(a.shape == std::vector<std::int64_t>{2, 3});
  CHECK(a.element_count() == 6);
  CHECK(a.data == std::string(reinterpret_cast<const char*>(values), sizeof values));
  CHECK_THROWS_AS(write_npy(path, "<f4", {2, 2}, a.data), std::invalid_argument);
  CHECK_THROWS_AS(write_npy(path, ">f4", {2, 3}, a.data), std::invalid_argument);
  {
    std::ofstream truncated(path, std::ios::binary | std::ios::trunc);
    const std::string header = npy_header("<f4", {2, 3});
    truncated.write(header.data(), static_cast<std::streamsize>(header.size()));
    truncated.write(a.data.data(), 8);
  }
  CHECK_THROWS_WITH_AS((void)read_npy(path), doctest::Contains("needs 24"), std::runtime_error);
  {
    std::ofstream other(path, std::ios::binary | std::ios::trunc);
    other << "not numpy";
  }
  CHECK_THROWS_WITH_AS((void)read_npy(path), doctest::Contains("not an .npy file"),
                       std::runtime_error);
  std::filesystem::remove(path);
}
