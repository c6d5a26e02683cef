#include "suites/imported/exported_program.hpp"

#include "suites/imported/example_inputs.hpp"

#include <torch/nativert/ModelRunnerHandle.h>

#include <memory>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// The package's forward as a model's: nativert's errors thrown again with what failed first.
c10::IValue run_program(torch::nativert::ModelRunnerHandle& runner, const std::string& package,
                        const model_inputs& inputs) {
  try {
    return runner.run(std::vector<c10::IValue>(inputs), {});
  } catch (const c10::OutOfMemoryError&) {
    throw;  // the child's record says "out of device memory", as for any model
  } catch (const c10::Error& e) {
    throw std::runtime_error(package + " failed in torch::nativert on arguments (" +
                             describe_arguments(inputs) + "): " + e.what_without_backtrace());
  }
}

}  // namespace

model_instance load_exported_program(const std::filesystem::path& package,
                                     const std::filesystem::path& inputs_path,
                                     const torch::Device& device) {
  if (!std::filesystem::is_regular_file(package))
    throw std::runtime_error("torch.export package " + package.string() + " not found");
  std::shared_ptr<torch::nativert::ModelRunnerHandle> runner;
  try {
    runner = std::make_shared<torch::nativert::ModelRunnerHandle>(package.string(), "model");
  } catch (const c10::Error& e) {
    throw std::runtime_error("torch::nativert cannot load " + package.string() +
                             " (expected the archive torch.export.save writes, its program "
                             "named \"model\"): " + e.what_without_backtrace());
  } catch (const std::exception& e) {  // the archive's JSON, read by nlohmann::json
    throw std::runtime_error("torch::nativert cannot load " + package.string() +
                             " (expected the archive torch.export.save writes, its program "
                             "named \"model\"): " + e.what());
  }
  model_instance instance;
  instance.module = std::make_shared<torch::nn::Module>();  // nativert holds the weights
  instance.example_inputs = load_example_inputs(inputs_path, device);
  const auto& first = instance.example_inputs.front().toTensor();
  instance.batch_size = first.dim() > 0 ? first.size(0) : 1;
  instance.forward = [runner, name = package.string()](const model_inputs& arguments) {
    return run_program(*runner, name, arguments);
  };
  instance.exported_program = package.string();
  instance.untraceable_because =
      "it runs in torch::nativert (a torch.export package), whose ops LibTorch's tracer does not "
      "record: the torchscript and openxla backends and compiled training need a TorchScript "
      "program (.pt); the inductor backend compiles the package itself";
  return instance;
}

}  // namespace benchmatrix
