#include "numerics/npy_file.hpp"

#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>

namespace benchmatrix {
namespace {

constexpr std::string_view magic{"\x93NUMPY", 6};

std::string shape_literal(const std::vector<std::int64_t>& shape) {
  // Python's repr of a tuple: (), (5,), (2, 3)
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    out += ",";
  return out + ")";
}

} // namespace

std::int64_t npy_array::element_count() const {
  std::int64_t n = 1;
  for (const auto d : shape)
    n *= d;
  return n;
}

std::size_t npy_item_size(std::string_view descr) {
  static const std::regex pattern("[<|]([fiub])([1248])");
  std::cmatch m;
  if (!std::regex_match(descr.data(), descr.data() + descr.size(), m, pattern))
    throw std::invalid_argument("unsupported .npy dtype '" + std::string(descr) +
                                "' (expected little-endian numeric, e.g. '<f4')");
  const std::size_t size = static_cast<std::size_t>(m[2].str()[0] - '0');
  if (m[1] == "f" && size < 2)
    throw std::invalid_argument("unsupported .npy dtype '" + std::string(descr) + "'");
  return size;
}

std::string npy_header(std::string_view descr, const std::vector<std::int64_t>& shape) {
  std::string dict = "{'descr': '" + std::string(descr) +
                     "', 'fortran_order': False, 'shape': " + shape_literal(shape) + ", }";
  // magic (6) + version (2) + length (2) + dict + padding + '\n' ≡ 0 (mod 64)
  const std::size_t unpadded = magic.size() + 4 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  if (dict.size() > 0xffff)
    throw std::invalid_argument(".npy header too long for version 1.0");
  std::string header(magic);
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>((dict.size() >> 8) & 0xff);
  return header + dict;
}

void write_npy(const std::filesystem::path& path, std::string_view descr,
               const std::vector<std::int64_t>& shape, std::string_view data) {
  std::int64_t count = 1;
  for (const auto d : shape) {
    if (d < 0)
      throw std::invalid_argument("negative dimension in the shape of " + path.string());
    count *= d;
  }
  if (static_cast<std::size_t>(count) * npy_item_size(descr) != data.size())
    throw std::invalid_argument("data of " + path.string() + " has " + std::to_string(data.size()) +
                                " bytes; shape " + shape_literal(shape) + " of '" +
                                std::string(descr) + "' needs " +
                                std::to_string(count * npy_item_size(descr)));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const std::string header = npy_header(descr, shape);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out)
    throw std::runtime_error("cannot write " + path.string());
}

npy_array read_npy(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path.string());
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto fail = [&](const std::string& what) {
    return std::runtime_error(path.string() + ": " + what);
  };
  if (bytes.size() < 10 || std::string_view(bytes).substr(0, 6) != magic)
    throw fail("not an .npy file (no \\x93NUMPY magic)");
  const auto byte = [&](std::size_t i) {
    return static_cast<std::size_t>(static_cast<unsigned char>(bytes[i]));
  };
  std::size_t header_len = 0, offset = 0;
  if (byte(6) == 1) {
    header_len = byte(8) | byte(9) << 8;
    offset = 10;
  } else if (byte(6) == 2 && bytes.size() >= 12) {
    header_len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    offset = 12;
  } else {
    throw fail("unsupported .npy format version " + std::to_string(byte(6)));
  }
  if (bytes.size() < offset + header_len)
    throw fail("truncated header");
  const std::string dict = bytes.substr(offset, header_len);
  static const std::regex descr_re("'descr':\\s*'([^']*)'");
  static const std::regex order_re("'fortran_order':\\s*(True|False)");
  static const std::regex shape_re("'shape':\\s*\\(([^)]*)\\)");
  std::smatch m;
  npy_array a;
  if (!std::regex_search(dict, m, descr_re))
    throw fail("header has no 'descr'");
  a.descr = m[1];
  if (!std::regex_search(dict, m, order_re))
    throw fail("header has no 'fortran_order'");
  if (m[1] == "True")
    throw fail("Fortran-order arrays are not supported");
  if (!std::regex_search(dict, m, shape_re))
    throw fail("header has no 'shape'");
  static const std::regex dim_re("\\d+");
  const std::string dims = m[1];
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), dim_re);
       it != std::sregex_iterator(); ++it)
    a.shape.push_back(std::stoll(it->str()));
  std::size_t item = 0;
  try {
    item = npy_item_size(a.descr);
  } catch (const std::invalid_argument& e) {
    throw fail(e.what());
  }
  const std::size_t need = static_cast<std::size_t>(a.element_count()) * item;
  if (bytes.size() - offset - header_len != need)
    throw fail("data has " + std::to_string(bytes.size() - offset - header_len) + " bytes; shape " +
               shape_literal(a.shape) + " of '" + a.descr + "' needs " + std::to_string(need));
  a.data = bytes.substr(offset + header_len);
  return a;
}

} // namespace benchmatrix
