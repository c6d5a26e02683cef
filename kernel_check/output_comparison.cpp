#include "kernel_check/output_comparison.hpp"

#include "numerics/npy_file.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace benchmatrix {
namespace {

template <class T>
double element(const std::string& data, std::int64_t i) {
  T value;
  std::memcpy(&value, data.data() + i * sizeof(T), sizeof(T));
  return static_cast<double>(value);
}

std::vector<double> as_doubles(const npy_array& array, const std::filesystem::path& path) {
  const auto n = array.element_count();
  std::vector<double> out(static_cast<std::size_t>(n));
  const auto& d = array.descr;
  for (std::int64_t i = 0; i < n; ++i) {
    double v;
    if (d == "<f4") v = element<float>(array.data, i);
    else if (d == "<f8") v = element<double>(array.data, i);
    else if (d == "<i8") v = element<std::int64_t>(array.data, i);
    else if (d == "<i4") v = element<std::int32_t>(array.data, i);
    else if (d == "<i2") v = element<std::int16_t>(array.data, i);
    else if (d == "|i1") v = element<std::int8_t>(array.data, i);
    else if (d == "|u1" || d == "|b1") v = element<std::uint8_t>(array.data, i);
    else throw std::runtime_error(path.string() + ": unsupported dtype " + d);
    out[static_cast<std::size_t>(i)] = v;
  }
  return out;
}

}  // namespace

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::ostringstream text;
  text << '[';
  for (std::size_t i = 0; i < shape.size(); ++i) text << (i ? ", " : "") << shape[i];
  text << ']';
  return text.str();
}

leaf_comparison compare_leaf(const std::filesystem::path& ref_file, const std::string& ref_dtype,
                             const std::filesystem::path& custom_file,
                             const std::string& custom_dtype, double atol, double rtol) {
  const npy_array ref = read_npy(ref_file);
  const npy_array custom = read_npy(custom_file);
  leaf_comparison result;
  result.ref_shape = ref.shape;
  result.custom_shape = custom.shape;
  result.ref_dtype = ref_dtype;
  result.custom_dtype = custom_dtype;
  if (ref.shape != custom.shape) {
    result.issue = "shape mismatch: reference " + shape_text(ref.shape) + ", custom " +
                   shape_text(custom.shape);
    return result;
  }
  const auto a = as_doubles(ref, ref_file);
  const auto b = as_doubles(custom, custom_file);
  result.elements = static_cast<std::int64_t>(a.size());
  double sum = 0;
  bool nan = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double diff = a[i] == b[i] ? 0.0 : std::fabs(b[i] - a[i]);  // equal infinities match
    if (std::isnan(diff)) {
      nan = true;
      ++result.mismatches;
      continue;
    }
    sum += diff;
    result.max_abs_diff = std::max(result.max_abs_diff, diff);
    if (!(diff <= atol + rtol * std::fabs(a[i]))) ++result.mismatches;
  }
  result.mean_abs_diff = a.empty() ? 0 : sum / static_cast<double>(a.size());
  if (nan) result.max_abs_diff = std::numeric_limits<double>::quiet_NaN();
  if (ref_dtype != custom_dtype)
    result.issue = "dtype mismatch: reference " + ref_dtype + ", custom " + custom_dtype;
  else if (result.mismatches > 0)
    result.issue = "output mismatch: " + std::to_string(result.mismatches) + " of " +
                   std::to_string(result.elements) + " elements outside atol + rtol * |ref|";
  return result;
}

}  // namespace benchmatrix
