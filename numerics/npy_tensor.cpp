#include "numerics/npy_tensor.hpp"

#include <ATen/ATen.h>

namespace benchmatrix {

std::optional<npy_storage> npy_storage_of(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return npy_storage{"float32", "<f4"};
    case at::kDouble: return npy_storage{"float64", "<f8"};
    case at::kBFloat16: return npy_storage{"bfloat16", "<f4"};  // widened exactly
    case at::kHalf: return npy_storage{"float16", "<f4"};       // widened exactly
    case at::kLong: return npy_storage{"int64", "<i8"};
    case at::kInt: return npy_storage{"int32", "<i4"};
    case at::kShort: return npy_storage{"int16", "<i2"};
    case at::kChar: return npy_storage{"int8", "|i1"};
    case at::kByte: return npy_storage{"uint8", "|u1"};
    case at::kBool: return npy_storage{"bool", "|b1"};
    default: return std::nullopt;
  }
}

at::Tensor npy_stored_tensor(const at::Tensor& tensor) {
  at::Tensor stored = tensor.detach().cpu();
  if (stored.scalar_type() == at::kBFloat16 || stored.scalar_type() == at::kHalf)
    stored = stored.to(at::kFloat);
  return stored.contiguous();
}

}  // namespace benchmatrix
