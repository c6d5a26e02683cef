// An example CUDA kernel for aten::relu (backend_bench --backend directory on a GPU): a vectorised
// grid-stride loop over contiguous data, any floating dtype (bfloat16 by default on CUDA).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>

namespace {

template <typename scalar_t>
__global__ void relu_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const float x = static_cast<float>(in[i]);
    out[i] = x > 0.f ? in[i] : static_cast<scalar_t>(0.f);
  }
}

}  // namespace

at::Tensor relu_kernel_impl(const at::Tensor& self) {
  TORCH_CHECK(self.is_cuda(), "relu_kernel_impl: CUDA tensors only");
  const at::Tensor input = self.contiguous();
  at::Tensor output = at::empty_like(input);
  const int64_t n = input.numel();
  if (n == 0) return output;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, 65535));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, input.scalar_type(), "relu_kernel_impl", [&] {
    relu_kernel<scalar_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        input.data_ptr<scalar_t>(), output.data_ptr<scalar_t>(), n);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return output;
}
