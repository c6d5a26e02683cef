#include "backends/ivalue_tensors.hpp"

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

}  // namespace benchmatrix
