// GPU fixture: LinearEmbeddingNew folds the sqrt(d_model) scaling into the GEMM's epilogue
// (addmm's alpha and beta: scale * (x W^T) + scale * bias), one cuBLAS call instead of a GEMM, a bias
// add and a scaling pass. Parameters are created exactly as LinearEmbedding's (the same nn::Linear),
// so run_and_check's seeded construction gives both the same weights.
#include "kernel_check/kernel_module.hpp"

#include <torch/nn/modules/linear.h>

#include <ATen/ops/addmm.h>
#include <ATen/ops/randn.h>

#include <cmath>

using benchmatrix::kernel_args;

struct LinearEmbeddingNew : torch::nn::Module {
  explicit LinearEmbeddingNew(const kernel_args& init)
      : d_model(init.at(1).toInt()),
        lut(register_module("lut", torch::nn::Linear(init.at(0).toInt(), init.at(1).toInt()))) {}
  torch::Tensor forward(const kernel_args& in) {
    const auto x = in[0].toTensor();
    const double scale = std::sqrt(static_cast<double>(d_model));
    const auto flat = x.reshape({-1, x.size(-1)});
    auto out = at::addmm(lut->bias, flat, lut->weight.t(), /*beta=*/scale, /*alpha=*/scale);
    auto shape = x.sizes().vec();
    shape.back() = d_model;
    return out.view(shape);
  }
  int64_t d_model;
  torch::nn::Linear lut;
};

kernel_args get_inputs() { return {at::randn({32, 512, 256})}; }
kernel_args get_init_inputs() { return {c10::IValue(int64_t{256}), c10::IValue(int64_t{1024})}; }

BENCHMATRIX_KERNEL_MODULE(LinearEmbeddingNew)
BENCHMATRIX_KERNEL_INPUTS(get_inputs, get_init_inputs)
