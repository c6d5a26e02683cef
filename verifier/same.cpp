#include "verifier/same.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace benchmatrix {
namespace {

void explain(std::string* why, const std::string& message) {
  if (why && why->empty()) *why = message;
}

std::vector<c10::IValue> elements_of(const c10::IValue& value) {
  if (value.isTuple()) return value.toTupleRef().elements().vec();
  return value.toListRef().vec();
}

/// Python's `t if isinstance(t, Tensor) else torch.tensor(t)`: a float becomes a float32 (the
/// default dtype) scalar tensor, an int an int64 one, a bool a bool one; anything else raises.
torch::Tensor to_tensor(const c10::IValue& value) {
  if (value.isTensor()) return value.toTensor();
  if (value.isDouble()) return torch::scalar_tensor(value.toDouble(), torch::kFloat);
  if (value.isInt()) return torch::scalar_tensor(value.toInt(), torch::kLong);
  if (value.isBool()) return torch::scalar_tensor(value.toBool(), torch::kBool);
  throw same_error("cannot make a tensor from a " + value.tagKind());
}

bool allclose(const torch::Tensor& a, const torch::Tensor& b, double tol, bool equal_nan) {
  return torch::allclose(a, b, /*rtol=*/tol, /*atol=*/tol, equal_nan);
}

/// get_multiplier() of same(): how much worse than eager (relative to fp64) the result may be.
double rmse_multiplier(const torch::Tensor& ref, const torch::Tensor& res,
                       const torch::Tensor& fp64_ref, const same_options& o) {
  if (o.force_max_multiplier) return 10.0;
  // fp16/bf16 (AMP) results get 3 instead of 2: fewer false alarms for the same end-to-end accuracy.
  double multiplier = (res.scalar_type() == torch::kHalf || res.scalar_type() == torch::kBFloat16)
                          ? 3.0
                          : 2.0;
  if (o.use_larger_multiplier_for_smaller_tensor && fp64_ref.numel() <= 10) {
    multiplier = 10.0;
  } else if (o.use_larger_multiplier_for_smaller_tensor && fp64_ref.numel() <= 500) {
    multiplier = 8.0;
  } else if (fp64_ref.numel() < 1000 ||
             (ref.dim() == 4 && ref.size(-1) == 1 && ref.size(-2) == 1) || o.tol >= 2 * 1e-2) {
    // noise dominates small tensors and 1x1 kernels; a large tol marks a higher-tolerance model
    multiplier = 3.0;
  }
  return multiplier;
}

bool same_tensor(torch::Tensor ref, torch::Tensor res, torch::Tensor fp64_ref,
                 const same_options& o, std::string* why) {
  if (ref.is_sparse()) {
    if (!res.is_sparse()) throw same_error("ref is sparse but res is not");
    ref = ref.to_dense();
    res = res.to_dense();
  }
  if (o.exact_dtype) {
    if (ref.scalar_type() != res.scalar_type()) {
      explain(why, std::string("dtype mismatch ") + c10::toString(ref.scalar_type()) + ", " +
                       c10::toString(res.scalar_type()));
      return false;
    }
    if (ref.scalar_type() == torch::kBool) {
      if (o.ignore_non_fp) return true;
      if (o.use_iou_for_bool) {
        const auto intersection = (ref & res).sum().to(torch::kFloat);
        const auto union_ = (ref | res).sum().to(torch::kFloat);
        if (union_.item<float>() == 0) return intersection.item<float>() == 0;
        const double iou = (intersection / union_).item<double>();
        if (iou < o.iou_threshold) {
          explain(why, "IoU accuracy failed: " + std::to_string(iou));
          return false;
        }
        return true;
      }
      // Triton stores bool as int8: compare as uint8.
      const bool r = allclose(ref.to(torch::kUInt8), res.to(torch::kUInt8), o.tol, o.equal_nan);
      if (!r) explain(why, "Accuracy failed: uint8 tensor did not match");
      return r;
    }
  }

  if (o.cos_similarity) {
    ref = ref.flatten().to(torch::kFloat);
    res = res.flatten().to(torch::kFloat);
    // early exit that handles zeros and NaN (cosine_similarity of two zero vectors is 0)
    if (allclose(ref, res, o.tol, /*equal_nan=*/true)) return true;
    const auto score = torch::cosine_similarity(ref, res, /*dim=*/0, /*eps=*/1e-6);
    const bool r = (score >= 0.99).item<bool>();
    if (!r) explain(why, "Similarity score=" + std::to_string(score.item<double>()));
    return r;
  }

  if (!o.exact_dtype) ref = ref.to(res.scalar_type());
  // equal tensors are allclose at any tolerance: one pass without temporaries (an eager
  // experiment's every leaf) before allclose's several
  if (ref.scalar_type() == res.scalar_type() && ref.sizes() == res.sizes() && torch::equal(ref, res))
    return true;
  if (allclose(ref, res, o.tol, o.equal_nan)) return true;

  if (fp64_ref.scalar_type() == torch::kDouble) {
    // res and fp64_ref free of NaN and loosely equal while ref has NaN: res is better than ref.
    constexpr double loose_tol = 1e-2 * 4;
    if (!fp64_ref.isnan().any().item<bool>() && !res.isnan().any().item<bool>() &&
        ref.isnan().any().item<bool>() &&
        allclose(fp64_ref.to(res.scalar_type()), res, loose_tol, o.equal_nan))
      return true;
    const double ref_error = rmse(fp64_ref, ref);
    const double res_error = rmse(fp64_ref, res);
    const double multiplier = rmse_multiplier(ref, res, fp64_ref, o);
    bool passes = res_error <= (multiplier * ref_error + o.tol / 10.0);
    if (!passes && o.equal_nan && std::isnan(ref_error) && std::isnan(res_error)) passes = true;
    if (!passes) {
      std::ostringstream message;
      message << "RMSE (res-fp64): " << res_error << ", (ref-fp64): " << ref_error
              << ", shape " << res.sizes() << ", res.dtype " << c10::toString(res.scalar_type())
              << ", multiplier " << multiplier << ", tol " << o.tol;
      explain(why, message.str());
    }
    return passes;
  }
  if (o.ignore_non_fp) return true;
  explain(why, "Accuracy failed: allclose not within tol=" + std::to_string(o.tol));
  return false;
}

/// Python's `ref == res` for str, int, None, bool and device (bool is an int there: True == 1).
bool same_scalar(const c10::IValue& ref, const c10::IValue& res) {
  const auto numeric = [](const c10::IValue& v) { return v.isInt() || v.isBool() || v.isDouble(); };
  const auto as_double = [](const c10::IValue& v) {
    return v.isDouble() ? v.toDouble() : v.isBool() ? double(v.toBool()) : double(v.toInt());
  };
  if (numeric(ref)) return numeric(res) && as_double(ref) == as_double(res);
  if (ref.isString()) return res.isString() && ref.toStringRef() == res.toStringRef();
  if (ref.isNone()) return res.isNone();
  if (ref.isDevice()) return res.isDevice() && ref.toDevice() == res.toDevice();
  return false;
}

/// The recursion of same(). `path` is this node's path from the root; on a failing leaf (or a
/// raise) it is copied to `where` (first one only, as `why`).
bool same_impl(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64_or_none,
               const same_options& o, std::string* why, const std::string& path,
               std::string* where) {
  const auto fail_here = [&] {
    if (where && where->empty() && !path.empty()) *where = path;
    return false;
  };
  const auto raise_here = [&](const std::string& message) -> bool {
    if (where && where->empty()) *where = path;
    throw same_error(path.empty() ? message : message + " at " + path);
  };
  // As Python, at every level: a missing fp64 reference is the eager reference itself.
  const c10::IValue& fp64_ref = fp64_or_none.isNone() ? ref : fp64_or_none;
  if (ref.isTuple() || ref.isList()) {
    if (!res.isTuple() && !res.isList())
      return raise_here("type mismatch " + ref.tagKind() + " " + res.tagKind());
    const auto refs = elements_of(ref);
    const auto ress = elements_of(res);
    if (refs.size() != ress.size()) {
      explain(why, "Length mismatch");
      return fail_here();
    }
    if (!fp64_ref.isTuple() && !fp64_ref.isList())
      return raise_here("fp64_ref is a " + fp64_ref.tagKind() + " where ref is a sequence");
    const auto fp64s = elements_of(fp64_ref);
    const size_t n = std::min(refs.size(), fp64s.size());  // Python's zip stops at the shortest
    for (size_t i = 0; i < n; ++i)
      if (!same_impl(refs[i], ress[i], fp64s[i], o, why, path + index_path(i), where))
        return false;
    return true;
  }
  if (ref.isGenericDict()) {
    if (!res.isGenericDict()) return raise_here("type mismatch dict " + res.tagKind());
    const auto ref_dict = ref.toGenericDict();
    const auto res_dict = res.toGenericDict();
    std::vector<std::string> keys;
    for (const auto& entry : ref_dict) keys.push_back(entry.key().toStringRef());
    std::vector<std::string> res_keys;
    for (const auto& entry : res_dict) res_keys.push_back(entry.key().toStringRef());
    std::sort(keys.begin(), keys.end());
    std::sort(res_keys.begin(), res_keys.end());
    if (keys != res_keys) return raise_here("keys mismatch");
    const auto fp64_dict = fp64_ref.toGenericDict();
    for (const auto& key : keys) {
      if (!same_impl(ref_dict.at(key), res_dict.at(key), fp64_dict.at(key), o, why,
                     path + key_path(key), where)) {
        explain(why, "Accuracy failed for key name " + key);
        return false;
      }
    }
    return true;
  }
  if (ref.isTensor() || ref.isDouble()) {
    bool passed = false;
    try {
      passed = same_tensor(to_tensor(ref), to_tensor(res), to_tensor(fp64_ref), o, why);
    } catch (const same_error& e) {
      return raise_here(e.what());
    }
    return passed || fail_here();
  }
  if (ref.isString() || ref.isInt() || ref.isNone() || ref.isBool() || ref.isDevice()) {
    if (o.ignore_non_fp) return true;
    const bool r = same_scalar(ref, res);
    if (!r) explain(why, "Accuracy failed (" + ref.tagKind() + ")");
    return r || fail_here();
  }
  return raise_here("unsupported type: " + ref.tagKind());
}

}  // namespace

std::string index_path(size_t index) { return "[" + std::to_string(index) + "]"; }
std::string key_path(const std::string& key) { return "['" + key + "']"; }

double rmse(const torch::Tensor& ref, const torch::Tensor& res) {
  return torch::sqrt(torch::mean(torch::square(ref - res))).item<double>();
}

bool same(const c10::IValue& ref, const c10::IValue& res, const c10::IValue& fp64_ref,
          const same_options& options, std::string* why, std::string* where) {
  return same_impl(ref, res, fp64_ref, options, why, "", where);
}

bool bitwise_same(const c10::IValue& ref, const c10::IValue& res, bool equal_nan,
                  std::string* why) {
  same_options options;
  options.tol = 0.0;
  options.equal_nan = equal_nan;
  return same(ref, res, c10::IValue(), options, why);
}

}  // namespace benchmatrix
