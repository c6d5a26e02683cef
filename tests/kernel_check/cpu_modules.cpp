// CPU fixtures for run_and_check's tests: one file (one runtime compile) holding the reference and
// several candidates. Model: x * w + y with a seeded weight w; ModelNew: the same computed another
// way (passes); ModelWrong: adds 0.5 to the first output (max difference exactly 0.5); ModelTuple:
// returns two outputs; ModelAbort: calls std::abort in forward (a crash, not run_and_check's).
#include "kernel_check/kernel_module.hpp"

#include <ATen/ops/add.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/randn.h>

#include <cstdlib>

using benchmatrix::kernel_args;

namespace {
torch::Tensor weight(const kernel_args& init) {
  return at::randn({init.at(0).toInt()});
}
}  // namespace

struct Model : torch::nn::Module {
  explicit Model(const kernel_args& init) { w = register_parameter("w", weight(init), false); }
  torch::Tensor forward(const kernel_args& in) { return in[0].toTensor() * w + in[1].toTensor(); }
  torch::Tensor w;
};

struct ModelNew : torch::nn::Module {
  explicit ModelNew(const kernel_args& init) { w = register_parameter("w", weight(init), false); }
  torch::Tensor forward(const kernel_args& in) {
    return at::add(in[1].toTensor(), at::mul(w, in[0].toTensor()));
  }
  torch::Tensor w;
};

struct ModelWrong : torch::nn::Module {
  explicit ModelWrong(const kernel_args& init) { w = register_parameter("w", weight(init), false); }
  torch::Tensor forward(const kernel_args& in) { return in[0].toTensor() * w + in[1].toTensor() + 0.5; }
  torch::Tensor w;
};

struct ModelAbort : torch::nn::Module {
  explicit ModelAbort(const kernel_args&) {}
  torch::Tensor forward(const kernel_args&) { std::abort(); }
};

kernel_args get_inputs() { return {at::randn({4, 16}), at::randn({4, 16})}; }
kernel_args get_init_inputs() { return {c10::IValue(int64_t{16})}; }

BENCHMATRIX_KERNEL_MODULE(Model)
BENCHMATRIX_KERNEL_MODULE(ModelNew)
BENCHMATRIX_KERNEL_MODULE(ModelWrong)
BENCHMATRIX_KERNEL_MODULE(ModelAbort)
BENCHMATRIX_KERNEL_INPUTS(get_inputs, get_init_inputs)
