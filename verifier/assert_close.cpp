#include "verifier/assert_close.hpp"

#include "numerics/close_tolerances.hpp"

#include <cmath>
#include <sstream>

namespace benchmatrix {

std::pair<double, double> default_close_tolerances(torch::ScalarType dtype) {
  // torch's dtype names for numerics/close_tolerances.hpp's table ("torch.float32" -> "float32").
  const char* name = "";
  switch (dtype) {
    case torch::kFloat: name = "float32"; break;
    case torch::kComplexFloat: name = "complex64"; break;
    case torch::kDouble: name = "float64"; break;
    case torch::kComplexDouble: name = "complex128"; break;
    case torch::kBFloat16: name = "bfloat16"; break;
    case torch::kHalf: name = "float16"; break;
    case torch::kComplexHalf: name = "complex32"; break;
    default: break;  // integers and bool: exact
  }
  const auto defaults = default_rtol_atol(name);
  return {defaults.rtol, defaults.atol};
}

namespace {

std::string number(double value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

struct comparer {
  close_tolerances tolerances;
  close_result result;

  void fail(const std::string& text) {
    if (result.passed) result.mismatch = text;
    result.passed = false;
  }

  void tensors(const std::string& path, const torch::Tensor& actual_in,
               const torch::Tensor& expected_in) {
    ++result.tensors_compared;
    if (actual_in.sizes() != expected_in.sizes()) {
      std::ostringstream out;
      out << path << ": shape " << actual_in.sizes() << " != baseline's " << expected_in.sizes();
      return fail(out.str());
    }
    if (actual_in.scalar_type() != expected_in.scalar_type())
      return fail(path + ": dtype " + std::string(c10::toString(actual_in.scalar_type())) +
                  " != baseline's " + c10::toString(expected_in.scalar_type()));
    const auto [default_rtol, default_atol] = default_close_tolerances(expected_in.scalar_type());
    const double rtol = tolerances.rtol.value_or(default_rtol);
    const double atol = tolerances.atol.value_or(default_atol);
    const bool complex = expected_in.is_complex();
    const auto as = complex ? torch::kComplexDouble : torch::kDouble;
    auto actual = actual_in.detach().cpu();
    auto expected = expected_in.detach().cpu();
    if (actual.is_sparse()) actual = actual.to_dense();
    if (expected.is_sparse()) expected = expected.to_dense();
    torch::Tensor close;
    torch::Tensor difference;
    if (actual.is_floating_point() || complex) {
      actual = actual.to(as).flatten();
      expected = expected.to(as).flatten();
      close = torch::isclose(actual, expected, rtol, atol, tolerances.equal_nan);
      difference = (actual - expected).abs();
      // Equal infinities are close with zero error (their difference is NaN); so are NaNs with
      // equal_nan.
      auto same = actual == expected;
      if (tolerances.equal_nan) same = same | (torch::isnan(actual) & torch::isnan(expected));
      difference = torch::where(same, torch::zeros_like(difference), difference);
    } else {
      // Integers and bool: exact unless tolerances were given (int64 avoids float rounding).
      actual = actual.to(torch::kLong).flatten();
      expected = expected.to(torch::kLong).flatten();
      if (rtol == 0 && atol == 0) {
        close = actual == expected;
      } else {
        close = torch::isclose(actual.to(torch::kDouble), expected.to(torch::kDouble), rtol, atol,
                               false);
      }
      difference = (actual - expected).abs().to(torch::kDouble);
    }
    if (difference.numel() == 0) return;
    // numerics/close_tolerances.hpp's relative_difference, element-wise: |a - e| / |e|, inf where
    // e is 0 and a is not, 0 where they are equal (difference is already 0 there).
    const auto magnitude = expected.abs().to(torch::kDouble);
    const auto relative = torch::where(difference != 0, difference / magnitude,
                                       torch::zeros_like(difference));
    const auto nan_free_max = [](const torch::Tensor& t) {
      return torch::where(torch::isnan(t), torch::full_like(t, INFINITY), t).max().item<double>();
    };
    result.max_abs_error = std::max(result.max_abs_error, nan_free_max(difference));
    result.max_rel_error = std::max(result.max_rel_error, nan_free_max(relative));
    if (close.all().item<bool>()) return;
    const long long index = torch::logical_not(close).nonzero()[0][0].item<int64_t>();
    const auto value = [&](const torch::Tensor& t) {
      if (t.is_complex()) {
        const auto c = t[index].item<c10::complex<double>>();
        return number(c.real()) + (c.imag() < 0 ? "-" : "+") + number(std::abs(c.imag())) + "j";
      }
      return t.is_floating_point() ? number(t[index].item<double>())
                                   : std::to_string(t[index].item<int64_t>());
    };
    fail(path + ": " + std::to_string(static_cast<long long>(torch::logical_not(close).sum().item<int64_t>())) +
         " of " + std::to_string(close.numel()) + " elements not close (rtol " + number(rtol) +
         ", atol " + number(atol) + "); first at flat index " + std::to_string(index) + ": " +
         value(actual) + " vs baseline " + value(expected));
  }

  void walk(const std::string& path, const c10::IValue& actual, const c10::IValue& expected) {
    if (actual.isTensor() || expected.isTensor()) {
      if (!actual.isTensor() || !expected.isTensor())
        return fail(path + ": " + actual.tagKind() + " vs baseline's " + expected.tagKind());
      return tensors(path, actual.toTensor(), expected.toTensor());
    }
    if ((actual.isTuple() || actual.isList()) && (expected.isTuple() || expected.isList())) {
      const auto a = actual.isTuple() ? actual.toTupleRef().elements().vec() : actual.toListRef().vec();
      const auto e =
          expected.isTuple() ? expected.toTupleRef().elements().vec() : expected.toListRef().vec();
      if (a.size() != e.size())
        return fail(path + ": " + std::to_string(a.size()) + " elements vs baseline's " +
                    std::to_string(e.size()));
      for (size_t i = 0; i < a.size(); ++i) walk(path + "[" + std::to_string(i) + "]", a[i], e[i]);
      return;
    }
    if (actual.isGenericDict() && expected.isGenericDict()) {
      const auto a = actual.toGenericDict();
      const auto e = expected.toGenericDict();
      if (a.size() != e.size())
        return fail(path + ": " + std::to_string(a.size()) + " entries vs baseline's " +
                    std::to_string(e.size()));
      for (const auto& entry : e) {
        const auto key = entry.key().isString() ? entry.key().toStringRef() : "<key>";
        if (!a.contains(entry.key())) return fail(path + ": no entry " + key);
        walk(path + "." + key, a.at(entry.key()), entry.value());
      }
      return;
    }
    if (!(actual == expected)) {
      std::ostringstream out;
      out << path << ": " << actual << " vs baseline " << expected;
      fail(out.str());
    }
  }
};

}  // namespace

close_result assert_close(const c10::IValue& actual, const c10::IValue& expected,
                          const close_tolerances& tolerances) {
  comparer c;
  c.tolerances = tolerances;
  c.walk("output", actual, expected);
  return c.result;
}

}  // namespace benchmatrix
