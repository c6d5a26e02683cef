// A model given as a TorchScript program (a torch::jit::load-able archive plus its example inputs),
// run from C++ by LibTorch's TorchScript interpreter instead of a hand-written C++ module: the
// model kind of the huggingface, timm_models and exported suites.
//
// Archive convention (what python -m benchmatrix_import writes, and what a user brings with
// --model-path): <model>.pt, a TorchScript module whose forward takes the example inputs
// positionally and returns a tensor or a tuple/list of tensors (torch.jit.trace or torch.jit.script,
// saved with .save()), and the example inputs, a torch.save'd tuple of tensors (CPU is fine: they
// move to the run's device).
#pragma once

#include "suites/model.hpp"

#include <filesystem>
#include <string>

namespace torch::jit {
struct Module;  // torch/script.h
}

namespace benchmatrix {

/// The runtime that runs these models, as records and logs name it.
inline constexpr const char* torchscript_runtime =
    "LibTorch TorchScript interpreter (torch::jit::load), graph optimisation off: the program's "
    "ops run one by one as in eager mode";

/// Whether `program`, as torch::jit::load gave it without a device, already holds every tensor on
/// `device` (no index: index 0): its parameters, its buffers and the tensor constants of its
/// methods' code, zero-dimensional CPU constants excepted. Those are the numbers of the traced
/// Python code (`0.5 * x` traces as a multiplication by a 0-dim CPU tensor constant): left on the
/// CPU they run as eager Python ran them, as scalars of the op (a CUDA kernel's argument), where
/// moved to the GPU each is a one-element tensor broadcast through a slower kernel (H200 x2,
/// 2026-11-28: the imported hf_GPT2's GELU ran 36 multiplications and 12 additions per eval step in
/// non-vectorized kernels, 0.65 ms of its 2.42 ms of kernel time; the port's 36 took 0.13 ms).
[[nodiscard]] bool holds_all_on(const torch::jit::Module& program, const torch::Device& device);

/// Loads `program` onto `device` and `inputs` (moved to `device`): on a GPU as saved when it
/// holds_all_on(device) (a program traced on the run's device, as benchmatrix_import's are), else
/// with every tensor moved there (torch::jit::load's map_location; on the CPU always). Checks that
/// the inputs are tensors matching the forward's argument count, and wraps the program as a model_instance whose
/// module exposes its parameters and buffers (same tensors, same dotted names) to the optimizer,
/// the dtype casts and train()/eval(). The batch size is the first input's first dimension (1 for
/// a scalar first input). Throws std::runtime_error naming the file and what was expected (and,
/// for a file torch::jit::load refuses, what it is instead: no zip or a damaged one, a torch.save'd
/// object, a torch.export package). An error while the program runs is thrown again with the
/// program, the arguments' dtypes and shapes and the error first, the TorchScript traceback after;
/// a CUDA allocation failure inside the interpreter as c10::OutOfMemoryError.
[[nodiscard]] model_instance load_torchscript_program(const std::filesystem::path& program,
                                                      const std::filesystem::path& inputs,
                                                      const torch::Device& device);

}  // namespace benchmatrix
