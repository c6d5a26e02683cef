// The registration of a C++/CUDA module for run_and_check, the KernelBench convention in C++: a source
// file defines module classes (torch::nn::Module subclasses) plus get_inputs() and get_init_inputs(),
// and registers them:
//
//   #include "kernel_check/kernel_module.hpp"
//   struct ModelNew : torch::nn::Module {
//     explicit ModelNew(const benchmatrix::kernel_args& init_inputs);   // get_init_inputs()'s values
//     torch::Tensor forward(const benchmatrix::kernel_args& inputs);     // or a c10::IValue (tuples,
//   };                                                                   // lists of tensors)
//   benchmatrix::kernel_args get_inputs();        // one trial's inputs (drawn after a seed is set)
//   benchmatrix::kernel_args get_init_inputs();   // the constructor's arguments
//   BENCHMATRIX_KERNEL_MODULE(ModelNew)           // once per class; several classes may share a file
//   BENCHMATRIX_KERNEL_INPUTS(get_inputs, get_init_inputs)   // exactly once per file
//
// run_and_check compiles the file into a shared library (g++, or nvcc for .cu) and finds the table
// through the one exported C symbol below. Light on purpose: only the module and IValue headers, so a
// runtime compile stays short; include what else you use (torch/nn/modules/linear.h, ATen ops...).
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace benchmatrix {

/// Positional arguments: tensors, numbers, lists (KernelBench's get_inputs() list).
using kernel_args = std::vector<c10::IValue>;

struct kernel_module_entry {
  std::string name;
  std::function<std::shared_ptr<torch::nn::Module>(const kernel_args&)> create;
  std::function<c10::IValue(torch::nn::Module&, const kernel_args&)> forward;
};

/// Everything one source file registers.
struct kernel_module_table {
  int abi_version = 1;
  std::vector<kernel_module_entry> modules;
  std::function<kernel_args()> get_inputs;
  std::function<kernel_args()> get_init_inputs;
};

namespace detail {
// One per shared library: the library is built with -fvisibility=hidden, so this never merges with
// another library's table.
inline kernel_module_table& kernel_table() {
  static kernel_module_table table;
  return table;
}
template <class Module>
struct kernel_module_registrar {
  explicit kernel_module_registrar(const char* name) {
    kernel_table().modules.push_back(
        {name,
         [](const kernel_args& init) { return std::make_shared<Module>(init); },
         [](torch::nn::Module& module, const kernel_args& inputs) {
           return c10::IValue(static_cast<Module&>(module).forward(inputs));
         }});
  }
};
struct kernel_inputs_registrar {
  kernel_inputs_registrar(kernel_args (*inputs)(), kernel_args (*init_inputs)()) {
    kernel_table().get_inputs = inputs;
    kernel_table().get_init_inputs = init_inputs;
  }
};
}  // namespace detail
}  // namespace benchmatrix

#define BENCHMATRIX_KERNEL_CONCAT_(a, b) a##b
#define BENCHMATRIX_KERNEL_CONCAT(a, b) BENCHMATRIX_KERNEL_CONCAT_(a, b)

/// Registers the class under its own name (the --ref_entry_point / --custom_entry_point value).
#define BENCHMATRIX_KERNEL_MODULE(Class)                                                           \
  static const ::benchmatrix::detail::kernel_module_registrar<Class> BENCHMATRIX_KERNEL_CONCAT(  \
      benchmatrix_kernel_module_, __LINE__)(#Class);

/// Registers the file's input functions and exports the table (exactly once per file).
#define BENCHMATRIX_KERNEL_INPUTS(get_inputs_function, get_init_inputs_function)                \
  static const ::benchmatrix::detail::kernel_inputs_registrar benchmatrix_kernel_inputs_(       \
      get_inputs_function, get_init_inputs_function);                                           \
  extern "C" __attribute__((visibility("default")))                                              \
  const ::benchmatrix::kernel_module_table* benchmatrix_kernel_module_table() {                 \
    return &::benchmatrix::detail::kernel_table();                                               \
  }
