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

namespace benchmatrix {

/// The runtime that runs these models, as records and logs name it.
inline constexpr const char* torchscript_runtime =
    "LibTorch TorchScript interpreter (torch::jit::load), graph optimisation off: the program's "
    "ops run one by one as in eager mode";

/// Loads `program` onto `device` and `inputs` (moved to `device`), checks that the inputs are
/// tensors matching the forward's argument count, and wraps the program as a model_instance whose
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
