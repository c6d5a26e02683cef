// A correct CPU kernel for aten::relu (backend_bench's directory layout: <op>/<op>.cpp defining
// <op>_kernel_impl with the aten op's signature). Written out by hand: no aten op is called.
#include <ATen/ATen.h>

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  TORCH_CHECK(self.device().is_cpu(), "relu_kernel_impl: CPU tensors only");
  const at::Tensor input = self.contiguous();
  at::Tensor output = at::empty_like(input);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, input.scalar_type(), "relu_kernel_impl", [&] {
    const scalar_t* in = input.data_ptr<scalar_t>();
    scalar_t* out = output.data_ptr<scalar_t>();
    for (int64_t i = 0; i < input.numel(); ++i)
      out[i] = static_cast<float>(in[i]) > 0 ? in[i] : static_cast<scalar_t>(0);
  });
  return output;
}
