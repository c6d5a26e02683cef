// An example CUDA kernel for aten::mul.Tensor (the old BackendBench layout: <op>/<op>.cu), with
// broadcasting and type promotion done by other aten ops, the product in the op-math type.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/cuda/CUDAContext.h>

namespace {

template <typename scalar_t>
__global__ void mul_kernel(const scalar_t* __restrict__ a, const scalar_t* __restrict__ b,
                           scalar_t* __restrict__ out, int64_t n) {
  using opmath_t = at::opmath_type<scalar_t>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
    out[i] = static_cast<scalar_t>(static_cast<opmath_t>(a[i]) * static_cast<opmath_t>(b[i]));
}

}  // namespace

at::Tensor mul_kernel_impl(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.is_cuda() || other.is_cuda(), "mul_kernel_impl: CUDA tensors only");
  const auto dtype = at::result_type(self, other);
  const auto shape = at::infer_size(self.sizes(), other.sizes());
  const at::Tensor a = self.to(self.is_cuda() ? self.device() : other.device(), dtype).expand(shape).contiguous();
  const at::Tensor b = other.to(a.device(), dtype).expand(shape).contiguous();
  at::Tensor output = at::empty(shape, a.options());
  const int64_t n = output.numel();
  if (n == 0) return output;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, 65535));
  AT_DISPATCH_ALL_TYPES_AND3(at::kBFloat16, at::kHalf, at::kBool, dtype, "mul_kernel_impl", [&] {
    mul_kernel<scalar_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), output.data_ptr<scalar_t>(), n);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return output;
}
