// Steps torch_support/multi_tensor_optimizer on parameters and per-step gradients that a Python
// test wrote with torch.save, and writes the parameters after the last step (torch.load reads
// them), so that tests/optimizer/test_optimizer_numerics.py compares them with torch.optim.
//
//   optimizer_step adam|sgd plain|capturable <input.pt> <output.pt>
// input: {"params": [tensor, ...], "grads": [[tensor or None per parameter] per step]}
#include "torch_support/multi_tensor_optimizer.hpp"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

namespace {

c10::IValue read_pickle(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return torch::pickle_load(bytes);
}

c10::IValue entry(const c10::IValue& dict, const std::string& key) {
  for (const auto& item : dict.toGenericDict())
    if (item.key().toStringRef() == key) return item.value();
  throw std::runtime_error("input has no '" + key + "' entry");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace benchmatrix;
  if (argc != 5) {
    std::cerr << "usage: optimizer_step adam|sgd plain|capturable <input.pt> <output.pt>\n";
    return 2;
  }
  try {
    const std::string algorithm = argv[1], mode = argv[2];
    if ((algorithm != "adam" && algorithm != "sgd") || (mode != "plain" && mode != "capturable"))
      throw std::invalid_argument("expected adam|sgd and plain|capturable, got " + algorithm +
                                  " " + mode);
    const c10::IValue input = read_pickle(argv[3]);
    std::vector<torch::Tensor> params;
    for (const auto& p : entry(input, "params").toListRef())
      params.push_back(p.toTensor().clone().requires_grad_(true));
    optimizer_settings settings;
    settings.algorithm = algorithm == "adam" ? optimizer_algorithm::adam : optimizer_algorithm::sgd;
    settings.capturable = mode == "capturable";
    multi_tensor_optimizer optimizer(params, settings);
    for (const auto& step_grads : entry(input, "grads").toListRef()) {
      const auto& grads = step_grads.toListRef();
      if (grads.size() != params.size())
        throw std::runtime_error("a step has " + std::to_string(grads.size()) + " gradients for " +
                                 std::to_string(params.size()) + " parameters");
      optimizer.zero_grad();
      for (size_t i = 0; i < params.size(); ++i)
        if (!grads[i].isNone()) params[i].mutable_grad() = grads[i].toTensor().clone();
      optimizer.step();
    }
    c10::impl::GenericList result(c10::TensorType::get());
    for (const auto& p : params) result.push_back(p.detach());
    const std::vector<char> bytes = torch::pickle_save(result);
    std::ofstream out(argv[4], std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[4]);
  } catch (const std::exception& e) {
    std::cerr << "optimizer_step: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
