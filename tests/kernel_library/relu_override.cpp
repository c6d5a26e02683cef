// Test fixture for experiment_runner --backend-library: a kernel library overriding aten::relu on
// the CPU. Built twice (tests/CMakeLists.txt): RELU_OVERRIDE_CORRECT=1 computes relu (clamp at 0),
// =0 returns its input unchanged (a wrong kernel the verifier must catch on the dummy MLP).
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor relu_override(const at::Tensor& self) {
#if RELU_OVERRIDE_CORRECT
  return at::clamp_min(self, 0);
#else
  return self.clone();
#endif
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("relu", relu_override); }
