// The model interface: what a suite provides for one model, and what the child gets when it builds one.
//
// Adding a model is one .cpp file in its suite folder that ends with BENCHMATRIX_REGISTER_MODEL, plus
// its YAML entries (batch sizes, skips, tolerances) in configs/torchbench.yaml.
#pragma once

#include "suites/model_catalog.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

/// Positional arguments of a model's forward, in order. IValue so that non-tensor arguments (llama's
/// `start_pos` int, dlrm's list of index tensors) travel exactly as TorchBench passes them.
using model_inputs = std::vector<c10::IValue>;

/// What the child asks a model builder for. The batch size is already resolved (CLI > YAML >
/// default; resolve_batch_size in worker/model_setup.hpp).
struct model_build_options {
  int64_t batch_size = 1;
  torch::Device device = torch::kCPU;
  bool training = false;  // true: the module is built for a train step (test=train)
  /// Tests only (never set by experiment_runner): the smallest example inputs that still exercise
  /// every layer (e.g. 64x64 images instead of 224x224, 16 tokens instead of 512), so that the whole
  /// zoo's CPU tests stay fast. The architecture and parameter count never change with it.
  bool reduced_inputs = false;
};

/// A model built for one experiment: the module, its example inputs and how to call it.
struct model_instance {
  std::shared_ptr<torch::nn::Module> module;
  model_inputs example_inputs;
  /// Runs module->forward on the inputs. Returns a tensor, or a tuple/list/dict of them for
  /// multi-output models (reduced to a scalar loss with reduce_to_scalar_loss for training).
  std::function<c10::IValue(const model_inputs&)> forward;
  /// The batch size the model actually uses (recorded in experiment.batch_size).
  int64_t batch_size = 1;
};

/// A model's static description, as TorchBench's Model class attributes give it.
struct model_definition {
  std::string name;                               // exactly as TorchBench spells it
  std::optional<int64_t> default_train_batch_size;  // nullopt: eval-only model (train raises)
  int64_t default_eval_batch_size = 1;
  /// DEFAULT_EVAL_BSIZE on the CPU, where the model's __init__ lowers it for device == "cpu"
  /// (BERT_pytorch: max(1, 16 / 8) = 2); nullopt: default_eval_batch_size on every device.
  std::optional<int64_t> default_cpu_eval_batch_size;
  bool allow_customize_batch_size = true;  // false: --batch-size and YAML batch sizes are ignored
  std::function<model_instance(const model_build_options&)> build;
};

/// Adds a model to a suite's catalog. Called from static initialisers (BENCHMATRIX_REGISTER_MODEL).
void register_model(const std::string& suite, model_definition definition);

/// The models of a suite, sorted byte-wise by name (upper case first, as TorchBench lists them).
[[nodiscard]] std::vector<const model_definition*> suite_models(const std::string& suite);

/// One model of a suite, or nullptr.
[[nodiscard]] const model_definition* find_model(const std::string& suite, const std::string& name);

namespace detail {
struct model_registrar {
  model_registrar(const char* suite, model_definition (*make)()) { register_model(suite, make()); }
};
}  // namespace detail

}  // namespace benchmatrix

/// Registers `make_definition()` (a function returning model_definition) in `suite` at load time.
#define BENCHMATRIX_REGISTER_MODEL(suite, make_definition)                                      \
  static const ::benchmatrix::detail::model_registrar benchmatrix_model_registrar_##make_definition{ \
      suite, &make_definition}
