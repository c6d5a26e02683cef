#include "torch_support/ivalue_tensors.hpp"

namespace benchmatrix {

c10::IValue map_tensors(const c10::IValue& value,
                        const std::function<torch::Tensor(const torch::Tensor&)>& fn) {
  if (value.isTensor()) return fn(value.toTensor());
  if (value.isTensorList()) {
    c10::List<torch::Tensor> out;
    for (const torch::Tensor& t : value.toTensorList()) out.push_back(fn(t));
    return out;
  }
  if (value.isList()) {
    c10::impl::GenericList out(value.toList().elementType());
    for (const c10::IValue& element : value.toList()) out.push_back(map_tensors(element, fn));
    return out;
  }
  if (value.isTuple()) {
    std::vector<c10::IValue> elements;
    for (const auto& element : value.toTupleRef().elements())
      elements.push_back(map_tensors(element, fn));
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  if (value.isGenericDict()) {
    const auto dict = value.toGenericDict();
    c10::impl::GenericDict out(dict.keyType(), dict.valueType());
    for (const auto& entry : dict) out.insert(entry.key(), map_tensors(entry.value(), fn));
    return out;
  }
  return value;
}

void for_each_tensor(const c10::IValue& value, const std::function<void(const torch::Tensor&)>& fn) {
  (void)map_tensors(value, [&fn](const torch::Tensor& t) {
    fn(t);
    return t;
  });
}

std::vector<torch::Tensor> tensor_leaves(const std::vector<c10::IValue>& values) {
  std::vector<torch::Tensor> leaves;
  for (const auto& value : values)
    for_each_tensor(value, [&leaves](const torch::Tensor& t) { leaves.push_back(t); });
  return leaves;
}

std::vector<c10::IValue> with_tensor_leaves(const std::vector<c10::IValue>& values,
                                            const std::vector<torch::Tensor>& leaves) {
  size_t next = 0;
  std::vector<c10::IValue> out;
  out.reserve(values.size());
  for (const auto& value : values)
    out.push_back(map_tensors(value, [&](const torch::Tensor&) {
      if (next >= leaves.size())
        throw std::invalid_argument("with_tensor_leaves: " + std::to_string(leaves.size()) +
                                    " tensors for a structure that holds more");
      return leaves[next++];
    }));
  if (next != leaves.size())
    throw std::invalid_argument("with_tensor_leaves: " + std::to_string(leaves.size()) +
                                " tensors for a structure that holds " + std::to_string(next));
  return out;
}

c10::IValue with_placeholder_leaves(const c10::IValue& value) {
  return map_tensors(value, [](const torch::Tensor& leaf) {
    return torch::empty({0}, leaf.options().requires_grad(false));
  });
}

}  // namespace benchmatrix
