// A disguised fallback: the "kernel" calls aten::sigmoid itself. With the override installed that
// re-enters the kernel, which backend_bench reports as a fallback instead of a pass.
#include <ATen/ATen.h>

at::Tensor sigmoid_kernel_impl(const at::Tensor& self) { return at::sigmoid(self.contiguous()); }
