#include "suites/imported/example_inputs.hpp"

#include <torch/serialize.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace benchmatrix {
namespace {

std::vector<char> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

model_inputs load_example_inputs(const std::filesystem::path& path,
                                 const torch::Device& device) {
  if (!std::filesystem::is_regular_file(path))
    throw std::runtime_error("example inputs " + path.string() +
                             " not found (expected a torch.save'd tuple of tensors next to the "
                             "program)");
  c10::IValue value;
  try {
    value = torch::pickle_load(read_bytes(path));
  } catch (const c10::Error& e) {
    throw std::runtime_error("example inputs " + path.string() +
                             " are not a torch.save'd file: " + e.what_without_backtrace());
  }
  std::vector<c10::IValue> elements;
  if (value.isTuple()) elements = value.toTupleRef().elements().vec();
  else if (value.isList()) elements = value.toList().vec();
  else if (value.isTensor()) elements = {value};
  else
    throw std::runtime_error("example inputs " + path.string() + " hold a " + value.tagKind() +
                             "; expected a tuple of tensors");
  model_inputs inputs;
  for (size_t i = 0; i < elements.size(); ++i) {
    if (!elements[i].isTensor())
      throw std::runtime_error("example inputs " + path.string() + ": element " +
                               std::to_string(i) + " is a " + elements[i].tagKind() +
                               "; expected a tuple of tensors");
    inputs.emplace_back(elements[i].toTensor().to(device));
  }
  if (inputs.empty())
    throw std::runtime_error("example inputs " + path.string() + " hold no tensor");
  return inputs;
}

std::string describe_arguments(const model_inputs& inputs) {
  std::ostringstream out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) out << ", ";
    if (inputs[i].isTensor())
      out << c10::toString(inputs[i].toTensor().scalar_type()) << inputs[i].toTensor().sizes();
    else
      out << inputs[i].tagKind();
  }
  return out.str();
}

}  // namespace benchmatrix
