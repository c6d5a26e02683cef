// A wrong kernel for aten::add.Tensor (BackendBench's overload folder naming): it subtracts.
#include <ATen/ATen.h>

at::Tensor add__Tensor_kernel_impl(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return at::sub(self, other, alpha);
}
