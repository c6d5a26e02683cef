#include "suites/imported/torchscript_program.hpp"

#include "suites/imported/example_inputs.hpp"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

namespace benchmatrix {
namespace {

/// The program's parameters and buffers, registered under the same hierarchy (so named_parameters
/// gives the program's dotted names); the tensors are shared, so a cast with set_data or an
/// optimizer step on them is what the program computes with. A tensor the program holds under
/// several names (tied weights: BertForMaskedLM's decoder weight is its word embeddings, its
/// decoder bias the head's bias) is registered once, under its first name in Python's order (own
/// attributes, then children), as Python's named_parameters() lists it: LibTorch lists every
/// registration, so the optimizer would have stepped a tied tensor twice per step.
void mirror_state(torch::nn::Module& target, const torch::jit::Module& source,
                  std::unordered_set<const c10::TensorImpl*>& seen) {
  for (const auto& p : source.named_parameters(/*recurse=*/false))
    if (seen.insert(p.value.unsafeGetTensorImpl()).second)
      target.register_parameter(p.name, p.value, p.value.requires_grad());
  for (const auto& b : source.named_buffers(/*recurse=*/false))
    if (seen.insert(b.value.unsafeGetTensorImpl()).second) target.register_buffer(b.name, b.value);
  for (const auto& child : source.named_children()) {
    auto module = std::make_shared<torch::nn::Module>();
    mirror_state(*module, child.value, seen);
    target.register_module(child.name, module);
  }
}

/// The last non-empty line of `text` (the interpreter puts the error itself there, after the
/// TorchScript traceback).
std::string last_line(const std::string& text) {
  const auto end = text.find_last_not_of(" \n\r");
  if (end == std::string::npos) return text;
  const auto begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

/// An error the interpreter raised while running `program` (it rethrows every op's error as a
/// std::runtime_error whose text is the TorchScript traceback and, last, the error) thrown again
/// with what failed first: the program, the arguments' shapes, the error. A CUDA allocator failure
/// becomes c10::OutOfMemoryError again, so that the child's record says "out of device memory" as
/// it does for hand-written models.
[[noreturn]] void rethrow_interpreter_error(const std::runtime_error& error,
                                            const std::string& program,
                                            const model_inputs& inputs) {
  const std::string traceback = error.what();
  const std::string cause = last_line(traceback);
  const std::string context = program + " failed in the TorchScript interpreter on arguments (" +
                              describe_arguments(inputs) + ")";
  // The CUDA caching allocator's wording (c10/cuda/CUDACachingAllocator.cpp)
  if (traceback.find("CUDA out of memory") != std::string::npos)
    TORCH_CHECK_WITH(OutOfMemoryError, false, cause, "\n", context, "; its traceback:\n",
                     traceback);
  throw std::runtime_error(context + ": " + cause + "\nTorchScript traceback:\n" + traceback);
}

class torchscript_program_module : public torch::nn::Module {
public:
  torchscript_program_module(torch::jit::Module program, std::string path)
      : m_program(std::move(program)), m_path(std::move(path)) {
    std::unordered_set<const c10::TensorImpl*> seen;
    mirror_state(*this, m_program, seen);
  }

  void train(bool on = true) override {
    torch::nn::Module::train(on);
    m_program.train(on);
  }

  c10::IValue forward(const model_inputs& inputs) {
    // No profiling, fusion or differentiable-graph rewriting: each op runs and records autograd as
    // in eager mode, so "eager" on this model is eager (the torchscript backend optimises it).
    torch::jit::GraphOptimizerEnabledGuard eager_like(false);
    try {
      return m_program.forward(std::vector<c10::IValue>(inputs));
    } catch (const std::runtime_error& e) {
      // c10::Error (OutOfMemoryError among them) is no std::runtime_error: it passes unchanged
      rethrow_interpreter_error(e, m_path, inputs);
    }
  }

private:
  torch::jit::Module m_program;
  std::string m_path;  // the program's file, named by errors
};

/// Why torch::jit::load refused `program`, from what the file holds (read with the zip reader
/// torch::jit::load uses): no zip or a damaged one, a torch.save'd object, a torch.export package;
/// else the loader's own error.
std::string load_failure_reason(const std::filesystem::path& program,
                                const std::string& load_error) {
  std::vector<std::string> records;
  try {
    caffe2::serialize::PyTorchStreamReader reader(program.string());
    records = reader.getAllRecords();
  } catch (const c10::Error& e) {
    return "the file is not a zip archive, or a damaged (e.g. truncated) one: " +
           e.msg().substr(0, e.msg().find('.'));
  }
  const auto has = [&](const std::string& name) {
    return std::find(records.begin(), records.end(), name) != records.end();
  };
  if (has("archive_format") || has("models/model.json"))
    return "it is a torch.export package (torch.export.save, a .pt2 ExportedProgram): name it "
           "FILE.pt2 and torch::nativert runs it (eval only), or save a torch.jit.trace of the "
           "module as FILE.pt";
  if (has("data.pkl") && !has("constants.pkl"))
    return "it is a torch.save'd object (a pickled module or a state dict), not a program: save "
           "one with torch.jit.trace(model, example_inputs).save(path)";
  return load_error;
}


/// Whether every tensor constant of `block` (and of the blocks nested in it) is on `device` or a
/// zero-dimensional CPU tensor.
bool constants_on(const torch::jit::Block* block, const torch::Device& device) {
  for (const torch::jit::Node* node : block->nodes()) {
    for (const torch::jit::Block* nested : node->blocks())
      if (!constants_on(nested, device)) return false;
    if (node->kind() != c10::prim::Constant || !node->output()->type()->cast<c10::TensorType>() ||
        !node->hasAttribute(c10::attr::value))
      continue;
    const at::Tensor& constant = node->t(c10::attr::value);
    if (constant.device() != device && !(constant.dim() == 0 && constant.is_cpu())) return false;
  }
  return true;
}

/// `program` loaded onto `device` (see load_torchscript_program).
torch::jit::Module load_onto(const std::filesystem::path& program, const torch::Device& device) {
  if (!device.is_cpu()) {
    try {
      torch::jit::Module as_saved = torch::jit::load(program.string());
      if (holds_all_on(as_saved, device)) return as_saved;
    } catch (const c10::Error&) {
      // Saved on a device this process lacks (another GPU index, or a GPU on a CPU host): the load
      // below moves it, or says why the file is no program.
    }
  }
  return torch::jit::load(program.string(), device);
}

}  // namespace

bool holds_all_on(const torch::jit::Module& program, const torch::Device& device) {
  const torch::Device wanted =
      device.has_index() || device.is_cpu() ? device : torch::Device(device.type(), 0);
  for (const auto& parameter : program.parameters())
    if (parameter.device() != wanted) return false;
  for (const auto& buffer : program.buffers())
    if (buffer.device() != wanted) return false;
  for (const auto& module : program.modules())
    for (const auto& method : module.get_methods())
      if (!constants_on(method.graph()->block(), wanted)) return false;
  return true;
}

model_instance load_torchscript_program(const std::filesystem::path& program,
                                        const std::filesystem::path& inputs_path,
                                        const torch::Device& device) {
  if (!std::filesystem::is_regular_file(program))
    throw std::runtime_error("TorchScript program " + program.string() + " not found");
  torch::jit::Module loaded;
  try {
    loaded = load_onto(program, device);
  } catch (const c10::Error& e) {
    throw std::runtime_error("cannot load " + program.string() +
                             " as a TorchScript archive (expected a torch.jit.trace or "
                             "torch.jit.script module saved with .save()): " +
                             load_failure_reason(program, e.what_without_backtrace()));
  }
  if (!loaded.find_method("forward"))
    throw std::runtime_error("TorchScript program " + program.string() + " has no forward method");
  model_inputs inputs = load_example_inputs(inputs_path, device);
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
  auto module = std::make_shared<torchscript_program_module>(std::move(loaded), program.string());
  model_instance instance;
  instance.module = module;
  const auto& first = inputs.front().toTensor();
  instance.batch_size = first.dim() > 0 ? first.size(0) : 1;
  instance.example_inputs = std::move(inputs);
  instance.forward = [module](const model_inputs& arguments) { return module->forward(arguments); };
  return instance;
}

}  // namespace benchmatrix
