// Test fixture for the regression gate's accuracy drift (issue 27, tests/e2e/test_regression_gate):
// a kernel library for experiment_runner --backend-library overriding aten::cat on the CPU and on
// CUDA with a slightly wrong kernel: the correct concatenation times 1 + the perturbation, computed
// in float64 and rounded once to the tensor's dtype. The perturbation is CAT_PERTURBATION (compiled
// in, 2.75e-3) unless the environment's BENCHMATRIX_CAT_PERTURBATION gives another (read once, when
// the library loads): the GPU nights (bench/regression_gate_gpu.sh) calibrate it for their models,
// whose verification runs in other precisions than the CPU's bfloat16.
//
// Of the gate's four models only squeezenet1_1 calls cat (its eight fire modules join two expand
// convs); resnet18, dcgan and alexnet never reach this kernel, so their figures must not move. The
// verifier's eager and float64 references run without the library (verify_child), so the error
// shows in squeezenet1_1's error against float64 while verification still passes: a PASS -> PASS
// drift that only the error figures reveal.
//
// Why 2.75e-3: the CPU eval configs verify in bfloat16 (ulp 2^-8..2^-7 relative), and the
// verifier passes a bfloat16 output whose RMSE against float64 is within 3x eager's (+ tol/10).
// Measured on squeezenet1_1 eager (eager's RMSE 0.00307): 2e-3 rounds almost entirely away (RMSE
// unchanged, cosine 0.9999986); 2.5e-3 gives RMSE 1.8x; 2.75e-3 gives 2.6x (0.00798, PASS; beyond
// the gate's 2x margin) and cosine to eager 0.999994; 3e-3 gives 3.6x, which the verifier FAILs
// (the gate's BROKEN, not a drift). A 10x drift cannot PASS in bfloat16 here.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <torch/library.h>

#include <cstdlib>
#include <string>
#include <vector>

#ifndef CAT_PERTURBATION
#define CAT_PERTURBATION 2.75e-3
#endif

namespace {

/// The relative perturbation: BENCHMATRIX_CAT_PERTURBATION when set (a number, e.g. "1e-2"), else
/// CAT_PERTURBATION. A value that is not a number stops the load with a message naming it.
double perturbation() {
  static const double value = [] {
    const char* text = std::getenv("BENCHMATRIX_CAT_PERTURBATION");
    if (text == nullptr || *text == '\0')
      return static_cast<double>(CAT_PERTURBATION);
    size_t used = 0;
    double parsed = 0;
    try {
      parsed = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    TORCH_CHECK(used == std::string(text).size(),
                "cat_perturbation: BENCHMATRIX_CAT_PERTURBATION must be a number such as 1e-2, got '",
                text, "'");
    return parsed;
  }();
  return value;
}

/// Whether `t` is the legacy empty 1-d tensor cat skips whatever its dimension ([0]).
bool skipped_by_cat(const at::Tensor& t) {
  return t.dim() == 1 && t.size(0) == 0;
}

/// aten::cat computed without aten::cat (calling it would come back here): the output allocated
/// at the joined size and each input copied into its slice, then scaled by 1 + CAT_PERTURBATION.
at::Tensor perturbed_cat(const at::ITensorListRef& tensors, int64_t dim) {
  std::vector<at::Tensor> parts;
  for (const at::Tensor& t : tensors)
    if (!skipped_by_cat(t))
      parts.push_back(t);
  TORCH_CHECK(!parts.empty(), "cat_perturbation: expected a non-empty list of tensors");
  const at::Tensor& first = parts.front();
  dim = at::maybe_wrap_dim(dim, first.dim());
  std::vector<int64_t> sizes = first.sizes().vec();
  sizes[dim] = 0;
  for (const at::Tensor& t : parts) {
    TORCH_CHECK(t.dim() == first.dim() && t.scalar_type() == first.scalar_type(),
                "cat_perturbation: expected tensors of one dtype and rank, got ", t.sizes(), " ",
                t.scalar_type(), " after ", first.sizes(), " ", first.scalar_type());
    sizes[dim] += t.size(dim);
  }
  at::Tensor out = at::empty(sizes, first.options());
  int64_t offset = 0;
  for (const at::Tensor& t : parts) {
    out.narrow(dim, offset, t.size(dim)).copy_(t);
    offset += t.size(dim);
  }
  // Scaled in float64 and rounded once to the output's dtype: a bfloat16 multiply would first
  // round the factor itself to a bfloat16 number (1 or 1 + 2^-7 near 1).
  return out.copy_(out.to(at::kDouble).mul_(1.0 + perturbation()));
}

} // namespace

TORCH_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("cat", perturbed_cat);
}

// CUDA too: the GPU nights' planted accuracy drift (llama calls cat in its rotary embedding).
// Registering needs no CUDA headers: the kernel is made of ATen calls that dispatch to CUDA.
TORCH_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("cat", perturbed_cat);
}
