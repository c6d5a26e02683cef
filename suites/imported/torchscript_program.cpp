#include "suites/imported/torchscript_program.hpp"

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <torch/serialize.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// The program's parameters and buffers, registered under the same hierarchy (so named_parameters
/// gives the program's dotted names); the tensors are shared, so a cast with set_data or an
/// optimizer step on them is what the program computes with.
void mirror_state(torch::nn::Module& target, const torch::jit::Module& source) {
  for (const auto& p : source.named_parameters(/*recurse=*/false))
    target.register_parameter(p.name, p.value, p.value.requires_grad());
  for (const auto& b : source.named_buffers(/*recurse=*/false))
    target.register_buffer(b.name, b.value);
  for (const auto& child : source.named_children()) {
    auto module = std::make_shared<torch::nn::Module>();
    mirror_state(*module, child.value);
    target.register_module(child.name, module);
  }
}

class torchscript_program_module : public torch::nn::Module {
public:
  explicit torchscript_program_module(torch::jit::Module program) : m_program(std::move(program)) {
    mirror_state(*this, m_program);
  }

  void train(bool on = true) override {
    torch::nn::Module::train(on);
    m_program.train(on);
  }

  c10::IValue forward(const model_inputs& inputs) {
    // No profiling, fusion or differentiable-graph rewriting: each op runs and records autograd as
    // in eager mode, so "eager" on this model is eager (the torchscript backend optimises it).
    torch::jit::GraphOptimizerEnabledGuard eager_like(false);
    return m_program.forward(std::vector<c10::IValue>(inputs));
  }

private:
  torch::jit::Module m_program;
};

std::vector<char> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

model_inputs load_inputs(const std::filesystem::path& path, const torch::Device& device) {
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

}  // namespace

model_instance load_torchscript_program(const std::filesystem::path& program,
                                        const std::filesystem::path& inputs_path,
                                        const torch::Device& device) {
  if (!std::filesystem::is_regular_file(program))
    throw std::runtime_error("TorchScript program " + program.string() + " not found");
  torch::jit::Module loaded;
  try {
    loaded = torch::jit::load(program.string(), device);
  } catch (const c10::Error& e) {
    throw std::runtime_error("cannot load " + program.string() +
                             " as a TorchScript archive (expected a torch.jit.trace or "
                             "torch.jit.script module saved with .save()): " +
                             e.what_without_backtrace());
  }
  if (!loaded.find_method("forward"))
    throw std::runtime_error("TorchScript program " + program.string() + " has no forward method");
  model_inputs inputs = load_inputs(inputs_path, device);
  const auto& schema = loaded.get_method("forward").function().getSchema();
  const size_t expected = schema.arguments().size() - 1;  // without self
  if (!schema.is_vararg() && expected != inputs.size()) {
    std::ostringstream signature;
    signature << schema;
    throw std::runtime_error("example inputs " + inputs_path.string() + " hold " +
                             std::to_string(inputs.size()) + " tensors but " + program.string() +
                             "'s forward takes " + std::to_string(expected) + " (" +
                             signature.str() + ")");
  }
  auto module = std::make_shared<torchscript_program_module>(std::move(loaded));
  model_instance instance;
  instance.module = module;
  const auto& first = inputs.front().toTensor();
  instance.batch_size = first.dim() > 0 ? first.size(0) : 1;
  instance.example_inputs = std::move(inputs);
  instance.forward = [module](const model_inputs& arguments) { return module->forward(arguments); };
  return instance;
}

}  // namespace benchmatrix
