// Does not compile (run_and_check must report the compiler's error and exit 3).
#include "kernel_check/kernel_module.hpp"

struct ModelNew : torch::nn::Module {
  explicit ModelNew(const benchmatrix::kernel_args&) {}
  torch::Tensor forward(const benchmatrix::kernel_args& in) { return in[0].toTensor() + undeclared_kernel_symbol; }
};

benchmatrix::kernel_args get_inputs() { return {}; }
benchmatrix::kernel_args get_init_inputs() { return {}; }

BENCHMATRIX_KERNEL_MODULE(ModelNew)
BENCHMATRIX_KERNEL_INPUTS(get_inputs, get_init_inputs)
