// A broken kernel for aten::mul.Tensor: it dereferences a null pointer (SIGSEGV), or, when
// BACKEND_BENCH_TEST_HANG is set in its environment, never returns (the op's child times out).
#include <ATen/ATen.h>

#include <cstdlib>

at::Tensor mul_kernel_impl(const at::Tensor& self, const at::Tensor& other) {
  if (std::getenv("BACKEND_BENCH_TEST_HANG"))
    for (volatile int i = 0;; i = i + 1) {
    }
  volatile float* nowhere = nullptr;
  *nowhere = 1.0f;
  return at::mul(self, other);
}
