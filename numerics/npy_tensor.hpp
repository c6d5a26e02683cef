// A LibTorch tensor as a NumPy .npy array (numerics/npy_file.hpp): which dtype it is stored as, and
// the bytes to store. bfloat16 and float16 are widened to float32 (exactly); numpy has no bfloat16.
// Shared by --export (worker/numerics_export) and run_and_check's child (kernel_check/worker_main).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace benchmatrix {

struct npy_storage {
  const char* dtype;  // torch's name of the tensor's dtype, without "torch." ("bfloat16")
  const char* descr;  // numpy's descr of the stored array ("<f4")
};

/// How a tensor of `type` is stored; nullopt for dtypes .npy cannot hold here (complex, ...).
[[nodiscard]] std::optional<npy_storage> npy_storage_of(at::ScalarType type);

/// The tensor as stored: detached, on the CPU, bfloat16/float16 widened to float32, contiguous.
[[nodiscard]] at::Tensor npy_stored_tensor(const at::Tensor& tensor);

}  // namespace benchmatrix
