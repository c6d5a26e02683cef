# GPU fixture in the seed's own format: the candidate adds with an inline CUDA kernel built by
# torch.utils.cpp_extension.load_inline (under run_and_check's --build_dir_prefix/torch_extensions).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void elementwise_add_kernel(const float* a, const float* b, float* out, int64_t size) {
    int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (idx < size) out[idx] = a[idx] + b[idx];
}

torch::Tensor elementwise_add_cuda(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    const int64_t size = a.numel();
    const int block_size = 256;
    const int num_blocks = (size + block_size - 1) / block_size;
    elementwise_add_kernel<<<num_blocks, block_size>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                        out.data_ptr<float>(), size);
    return out;
}
"""

cpp_source = "torch::Tensor elementwise_add_cuda(torch::Tensor a, torch::Tensor b);"

elementwise_add = load_inline(
    name="benchmatrix_elementwise_add",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["elementwise_add_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.elementwise_add = elementwise_add

    def forward(self, a, b):
        return self.elementwise_add.elementwise_add_cuda(a.contiguous(), b.contiguous())
