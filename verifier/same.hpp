// PyTorch's accuracy oracle, torch._dynamo.utils.same (torch 2.11), ported to C++ over IValue trees:
// the verdict of every case equals the Python original's (tests/verifier checks this against the
// installed pip torch). See shared/reference/dynamo_bench.md §1.2-§1.3.
//
// Structure: tuples/lists recurse element-wise (length mismatch -> false; a non-sequence result is
// an error, as Python's assert), dicts by sorted keys (key-set mismatch is an error), tensors and
// floats go through allclose -> fp64 RMSE rule -> fail, ints/bools/strings/None compare with ==.
#pragma once

#include <torch/torch.h>

#include <string>

namespace benchmatrix {

/// same()'s keyword arguments, with its defaults.
struct same_options {
  bool cos_similarity = false;
  double tol = 1e-4;  // atol = rtol for allclose; also the slack tol/10 of the RMSE rule
  bool equal_nan = false;
  bool exact_dtype = true;
  bool ignore_non_fp = false;
  bool use_larger_multiplier_for_smaller_tensor = false;
  bool force_max_multiplier = false;
  bool use_iou_for_bool = false;
  double iou_threshold = 0.99;
};

/// Thrown where Python's same() raises (its asserts and unsupported types); the caller decides what
/// that means (the harness counts it as a failure).
class same_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One step of a path into a nested output, in Python's indexing syntax: "[3]" into a tuple or
/// list, "['key']" into a dict. same()'s `where` and output_comparison's leaf paths are made of them.
[[nodiscard]] std::string index_path(size_t index);
[[nodiscard]] std::string key_path(const std::string& key);

/// True when `res` matches `ref`, judged against `fp64_ref` (the float64 golden run; None: `ref`
/// itself, as in Python). Short-circuits like Python's all(): the first failing leaf decides.
/// `why`, when given, receives the message Python would log for the failing leaf; `where`, when
/// given, the path of that leaf from the root in Python's indexing syntax ("" for the root itself,
/// "[1]", "[2]['fc.weight.grad']"), so a failure can be located in a nested output. Where same()
/// raises, `where` names the node it raised at.
[[nodiscard]] bool same(const c10::IValue& ref, const c10::IValue& res,
                        const c10::IValue& fp64_ref, const same_options& options,
                        std::string* why = nullptr, std::string* where = nullptr);

/// bitwise_same: same() with tol 0 (exact equality; NaNs equal only with equal_nan).
[[nodiscard]] bool bitwise_same(const c10::IValue& ref, const c10::IValue& res,
                                bool equal_nan = false, std::string* why = nullptr);

/// sqrt(mean(square(ref - res))) as a double (torch._dynamo.utils.rmse).
[[nodiscard]] double rmse(const torch::Tensor& ref, const torch::Tensor& res);

}  // namespace benchmatrix
