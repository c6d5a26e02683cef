// GPU fixture (the seed's first example, rebuilt): the reference adds two tensors with ATen.
// bench/run_and_check_gpu.sh runs it against elementwise_add.cu.
#include "kernel_check/kernel_module.hpp"

#include <ATen/ops/add.h>
#include <ATen/ops/randn.h>

using benchmatrix::kernel_args;

struct Model : torch::nn::Module {
  explicit Model(const kernel_args&) {}
  torch::Tensor forward(const kernel_args& in) { return at::add(in[0].toTensor(), in[1].toTensor()); }
};

// The seed's shape is (1, 128); 4096 x 4096 makes the timing about memory bandwidth, not launches.
kernel_args get_inputs() { return {at::randn({4096, 4096}), at::randn({4096, 4096})}; }
kernel_args get_init_inputs() { return {}; }

BENCHMATRIX_KERNEL_MODULE(Model)
BENCHMATRIX_KERNEL_INPUTS(get_inputs, get_init_inputs)
