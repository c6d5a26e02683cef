// The model interface: what a suite provides for one model, and what the child gets when it builds one.
//
// Adding a torchbench model takes:
//  1. suites/torchbench/<name>.cpp, named as TorchBench names the model: the module (parameter names
//     equal to the Python state_dict's, modules built in Python's order so that the CPU RNG draws
//     match), a build function returning model_instance, all in `namespace <name>_model` (the
//     worker is a unity build: files share translation units), and BENCHMATRIX_REGISTER_MODEL(
//     "torchbench", ...) after `using <name>_model::make_..._definition;`. Shared layers, init loops, ImageNet constants and the one-input model_instance are in
//     suites/torchbench/torchbench_layers.hpp.
//  2. Its line in benchmatrix_worker's source list in CMakeLists.txt (an OBJECT library, so that the
//     static registrar reaches every executable).
//  3. Its entry in tests/models/model_expectations.inc: model_zoo_test iterates the registry and fails
//     for a model without one (parameter count, eval output shapes and dtypes).
//  4. Its entries in configs/torchbench.yaml where it needs any: batch-size overrides, skips,
//     tolerances, dont_change_batch_size (a model listed nowhere runs with its own defaults).
// Where the model has a pip original (torchvision, timm, transformers), also add it to REFERENCES in
// tests/models/test_reference_architectures.py, which compares parameter names and shapes.
#pragma once

#include "suites/model_catalog.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
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
  /// The dtype the precision rules cast the model to (nullopt: float32, as built). Imported models
  /// (suites/imported/) are built in it; hand-written ones are cast after the build.
  std::optional<torch::ScalarType> dtype;
  /// --cache-dir: imported models' archives are cached under <cache_dir>/imported/.
  std::string cache_dir;
  /// True when a graph backend captures the model (a dynamo backend, torch_xla2): an imported
  /// transformers model is then traced as torch.compile sees it, with the attention masks
  /// transformers builds under any tracer; false (eager, default): with the masks its eager
  /// forward builds, none for the suites' inputs (python/benchmatrix_import: --traced-for).
  bool graph_capture = false;
  /// True when the backend compiles a torch.export program of the model where it has one (the
  /// inductor backend's eval): an imported model's cache entry then also holds its forward
  /// exported by torch.export (model_instance::exported_program).
  bool exported_program = false;
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
  /// Where the model comes from, for the record's "model_source" key: kind (imported, exported),
  /// runtime, program file... Empty for the hand-written C++ models.
  std::map<std::string, std::string> source;
  /// A torch.export package (.pt2, torch.export.save's archive) of the same forward on the same
  /// device and dtype, which the inductor backend compiles instead of tracing `forward`; empty
  /// when the model has none (hand-written models; imported ones unless asked for).
  std::string exported_program;
  /// Why LibTorch's tracer cannot record `forward` (a backend that traces the model then fails
  /// with it); empty when it can.
  std::string untraceable_because;
};

/// A model that cannot be built on this machine for a reason outside benchmatrix and the model's
/// own code (a download, a missing Python package or data file) or that does not implement the
/// test (an eval-only TorchBench model asked to train): the child writes a SKIP record with the
/// message, which names what is missing and how to provide it.
class model_unavailable : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
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

/// Removes every model of a suite (a TorchBench checkout replaces the built-in torchbench models).
void remove_suite_models(const std::string& suite);

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
