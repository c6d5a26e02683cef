// describe_model SUITE MODEL: prints the model's parameters and persistent buffers as JSON
// ({"parameters": {name: shape}, "buffers": {name: shape}}), shared tensors listed once under their
// first name as Python's named_parameters() does. test_reference_architectures.py compares this with
// the pip torchvision / timm / transformers models that TorchBench wraps.
#include "suites/model.hpp"

#include <iostream>
#include <set>

namespace {

void print_tensors(const char* key, const torch::OrderedDict<std::string, torch::Tensor>& tensors) {
  std::set<const void*> seen;
  std::cout << '"' << key << "\": {";
  bool first = true;
  for (const auto& item : tensors) {
    if (!seen.insert(item.value().unsafeGetTensorImpl()).second) continue;
    std::cout << (first ? "" : ", ") << '"' << item.key() << "\": [";
    for (int64_t d = 0; d < item.value().dim(); ++d) std::cout << (d ? ", " : "") << item.value().size(d);
    std::cout << ']';
    first = false;
  }
  std::cout << '}';
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: describe_model SUITE MODEL\n";
    return 2;
  }
  const auto* definition = benchmatrix::find_model(argv[1], argv[2]);
  if (!definition) {
    std::cerr << "describe_model: suite " << argv[1] << " has no model " << argv[2] << '\n';
    return 2;
  }
  benchmatrix::model_build_options options;
  options.reduced_inputs = true;  // only the module matters here
  options.batch_size = 1;
  const auto model = definition->build(options);
  std::cout << '{';
  print_tensors("parameters", model.module->named_parameters());
  std::cout << ", ";
  print_tensors("buffers", model.module->named_buffers());
  std::cout << "}\n";
  return 0;
}
