// GPU fixture (the seed's second example, rebuilt): LinearEmbedding, a linear projection scaled by
// sqrt(d_model) (the annotated Transformer's embedding for continuous inputs). The reference runs
// nn::Linear and then the scaling, two kernels and a round trip through memory.
#include "kernel_check/kernel_module.hpp"

#include <torch/nn/modules/linear.h>

#include <ATen/ops/randn.h>

#include <cmath>

using benchmatrix::kernel_args;

struct LinearEmbedding : torch::nn::Module {
  explicit LinearEmbedding(const kernel_args& init)
      : d_model(init.at(1).toInt()),
        lut(register_module("lut", torch::nn::Linear(init.at(0).toInt(), init.at(1).toInt()))) {}
  torch::Tensor forward(const kernel_args& in) {
    return lut->forward(in[0].toTensor()) * std::sqrt(static_cast<double>(d_model));
  }
  int64_t d_model;
  torch::nn::Linear lut;
};

// (batch, sequence, input features) -> d_model, as the seed's example.
kernel_args get_inputs() { return {at::randn({32, 512, 256})}; }
kernel_args get_init_inputs() { return {c10::IValue(int64_t{256}), c10::IValue(int64_t{1024})}; }

BENCHMATRIX_KERNEL_MODULE(LinearEmbedding)
BENCHMATRIX_KERNEL_INPUTS(get_inputs, get_init_inputs)
