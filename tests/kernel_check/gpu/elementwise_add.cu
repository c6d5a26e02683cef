// GPU fixture (the seed's first example, rebuilt): ModelNew adds two float32 CUDA tensors with a
// hand-written kernel (a grid-stride loop, float4 loads when the sizes allow). Compiled by
// run_and_check with nvcc for the GPU's architecture.
#include "kernel_check/kernel_module.hpp"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/randn.h>
#include <c10/cuda/CUDAException.h>

using benchmatrix::kernel_args;

namespace {

__global__ void add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                           float* __restrict__ out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    out[i] = a[i] + b[i];
}

__global__ void add_kernel4(const float4* __restrict__ a, const float4* __restrict__ b,
                            float4* __restrict__ out, int64_t n4) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4; i += stride) {
    const float4 x = a[i], y = b[i];
    out[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

torch::Tensor elementwise_add(const torch::Tensor& a_in, const torch::Tensor& b_in) {
  TORCH_CHECK(a_in.is_cuda() && b_in.is_cuda(), "elementwise_add: CUDA tensors expected");
  TORCH_CHECK(a_in.scalar_type() == at::kFloat && b_in.scalar_type() == at::kFloat,
              "elementwise_add: float32 expected");
  TORCH_CHECK(a_in.sizes() == b_in.sizes(), "elementwise_add: equal shapes expected");
  const auto a = a_in.contiguous();
  const auto b = b_in.contiguous();
  auto out = at::empty_like(a);
  const int64_t n = a.numel();
  if (n == 0) return out;
  constexpr int threads = 256;
  const auto stream = at::cuda::getCurrentCUDAStream();
  if (n % 4 == 0) {
    const int64_t n4 = n / 4;
    const int blocks = static_cast<int>(std::min<int64_t>((n4 + threads - 1) / threads, 65535));
    add_kernel4<<<blocks, threads, 0, stream>>>(reinterpret_cast<const float4*>(a.data_ptr<float>()),
                                                reinterpret_cast<const float4*>(b.data_ptr<float>()),
                                                reinterpret_cast<float4*>(out.data_ptr<float>()), n4);
  } else {
    const int blocks = static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, 65535));
    add_kernel<<<blocks, threads, 0, stream>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                               out.data_ptr<float>(), n);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace

struct ModelNew : torch::nn::Module {
  explicit ModelNew(const kernel_args&) {}
  torch::Tensor forward(const kernel_args& in) {
    return elementwise_add(in[0].toTensor(), in[1].toTensor());
  }
};

// The reference's get_inputs serves both sides; these keep the file self-contained.
kernel_args get_inputs() { return {at::randn({4096, 4096}), at::randn({4096, 4096})}; }
kernel_args get_init_inputs() { return {}; }

BENCHMATRIX_KERNEL_MODULE(ModelNew)
BENCHMATRIX_KERNEL_INPUTS(get_inputs, get_init_inputs)
