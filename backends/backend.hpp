// The backend interface: turn a built model into a step function that the timing loop calls once
// per iteration. One folder/file per backend behind this interface; eager is the first.
#pragma once

#include "backends/capture_memory.hpp"
#include "core/experiment_config.hpp"
#include "suites/model.hpp"
#include "suites/suite_config.hpp"
#include "torch_support/multi_tensor_optimizer.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace benchmatrix {

/// One model iteration: a forward (eval) or a whole train step. Returns what the step produces
/// (the prediction for eval; for train nothing, or — with collect_full_output — the tuple
/// (prediction, loss, {"<param>.grad": gradient}, {"<param>": parameter after the update},
/// {"<buffer>": buffer after the step}), as dynamo's collect_results; a parameter without gradient
/// gets zeros, so None and 0 compare equal).
using step_function = std::function<c10::IValue(const model_inputs&)>;

/// How a train step sets its module's mode. Timed steps always use `train`; the --verify child of
/// an openxla train step whose XLA program draws random numbers (its own dropout masks, never
/// eager's) uses one of the others where it removes them (worker/verify_child.cpp).
enum class train_module_mode {
  train,        // module.train(): dropout on, BatchNorm on batch statistics
  dropout_off,  // module.train(), then its Dropout modules eval(): BatchNorm still on batch
                // statistics, the buffer updates compared as timed
  eval,         // module.eval(), as PyTorch's harness checks TorchBench training (use_eval_mode):
                // dropout off, BatchNorm on running statistics; loss, gradients, optimizer step
                // as in train mode
};

/// "train", "dropout_off" or "eval" (the record's verification.model_mode).
[[nodiscard]] const char* train_module_mode_name(train_module_mode mode);

/// Puts `module` in `mode` (its Dropout modules: those whose name() has "Dropout", LibTorch's
/// Dropout, Dropout2d, Dropout3d, AlphaDropout and FeatureAlphaDropout).
void set_train_module_mode(torch::nn::Module& module, train_module_mode mode);

struct step_options {
  bool training = false;
  /// Autocast for the forward (xla_runner.md §7.3: training on CUDA, or force_amp models; or
  /// --precision amp/amp_bf16) in amp_dtype, without a GradScaler, as the original does.
  bool use_amp = false;
  torch::ScalarType amp_dtype = torch::kHalf;  // kBFloat16 for --precision=amp_bf16
  torch::Device device = torch::kCPU;
  optimizer_algorithm optimizer = optimizer_algorithm::adam;  // lr 0.01 (§7.2): train_optimizer
  bool collect_full_output = false;
  train_module_mode module_mode = train_module_mode::train;  // train steps only
};

/// `sum/numel` for a tensor, the mean over list/tuple/dict entries (torch._dynamo.testing
/// reduce_to_scalar_loss). Throws std::invalid_argument for other outputs.
[[nodiscard]] torch::Tensor reduce_to_scalar_loss(const c10::IValue& output);

/// A model's train-step optimizer: SGD for the TorchBench models the original runner trains with
/// SGD (TRAIN_WITH_SGD, xla_runner.md §7.2) and the suite YAML's optimizer.sgd (PyTorch's
/// BENCHMARK_USE_SGD for huggingface and timm_models), none for its optimizer.none (PyTorch's
/// CI_SKIP_OPTIMIZER: no update, gradients only), Adam otherwise. `config` may be null.
[[nodiscard]] optimizer_algorithm train_optimizer(const std::string& model_name,
                                                  const suite_config* config);

/// A model forward: the model's own, or a backend's replacement for it that takes the same inputs
/// and returns the same structure.
using forward_function = std::function<c10::IValue(const model_inputs&)>;

/// Eval: `forward` under autocast when options.use_amp.
[[nodiscard]] step_function make_eval_step(forward_function forward, const step_options& options);

/// The optimizer of a train step over the model's parameters: SGD or Adam, lr 0.01 (§7.2), as
/// Python's torch.optim runs them by default (multi-tensor kernels). `capturable`: Adam's step
/// counter on the device, for a step inside a CUDA graph (torch_support/multi_tensor_optimizer).
[[nodiscard]] std::shared_ptr<multi_tensor_optimizer>
make_optimizer(model_instance& model, const step_options& options, bool capturable = false);

/// `forward` then reduce_to_scalar_loss, both under autocast when options.use_amp. Returns
/// (prediction, loss).
[[nodiscard]] std::pair<c10::IValue, torch::Tensor>
forward_and_loss(const forward_function& forward, const model_inputs& inputs,
                 const step_options& options);

/// The collect_full_output tuple of a finished train step (see step_function).
[[nodiscard]] c10::IValue full_train_output(model_instance& model, const c10::IValue& prediction,
                                            const torch::Tensor& loss);

/// Train: zero_grad, forward and loss, backward, optimizer step, with `forward` as the forward.
/// The model must outlive the returned function.
[[nodiscard]] step_function make_train_step(model_instance& model, forward_function forward,
                                            const step_options& options);

/// Eager execution: eval calls forward; train runs zero_grad, forward, loss, backward, step.
/// The model must outlive the returned function.
[[nodiscard]] step_function make_eager_step(model_instance& model, const step_options& options);

/// What compiled backends need beyond the model: where their artifacts are cached.
struct backend_context {
  std::string model_name;
  std::filesystem::path cache_dir;  // --cache-dir
  bool cold_start = false;          // --cold-start: rebuild cached artifacts, with fresh
                                    // Inductor/Triton caches, once per sweep:
  std::string sweep_token;          // the sweep's --timestamp; the children of one sweep (timing,
                                    // verifier, accuracy baseline) share its fresh build
  std::string inductor_mode = "default";  // the config's --inductor-mode (inductor only)
  std::string precision = "auto";         // the config's --precision (named in packages'
                                          // descriptions where not auto)
  bool compile_only = false;        // a --compile-ahead child: fill the cache and report the
                                    // compile; a backend may then return no step (inductor does
                                    // not load its package, capture or warm up)
};

/// How a backend prepared its step (tracing, compiling or loading, capture, warm-up), measured
/// apart from the timed repeats.
struct compile_report {
  double compile_time_s = 0;       // wall time of the whole preparation
  std::optional<double> compiler_s;  // the compile helper's own wall time, when this child ran it
  std::optional<bool> cache_hit;   // for backends with cached artifacts
  std::string cache_note;          // why a cached entry was rebuilt, if it was
  std::string capture_fallback;    // why a CUDA graph holds less than the whole train step
                                   // (the record's compile.capture_fallback), if it does
  /// Where the compile helper's time went, when this child ran it (the record's
  /// compile.breakdown_s: phase name -> seconds, in the helper's order; compile_timers.py).
  std::vector<std::pair<std::string, double>> breakdown_s;
  /// Where this child's own preparation went (the record's compile.preparation_s: phase name ->
  /// seconds, in order; inductor eval: trace_s, cache_key_s, cache_s, load_s, first_call_s,
  /// warm_up_s), for seeing what a warm hit spends.
  std::vector<std::pair<std::string, double>> preparation_s;
  std::optional<int> compile_threads;  // the helper's Inductor compile threads (from its affinity)
  /// How the compile helper ran, when this child ran it (the record's compile.helper): "service"
  /// (forked by the compile service, torch already imported: process/helper_service.hpp) or
  /// "process" (a Python of its own); empty when the helper did not say (an older entry).
  std::string helper;
  std::string freezing_failure;        // why Inductor freezing failed, if it did (then off)
  /// What the compile helper compiled (the record's compile.program): "torch.export package"
  /// (the model's own, compiled as it is) or "TorchScript, converted by TS2EPConverter" (the
  /// traced forward); empty when the helper did not say (an older entry, other backends).
  std::string program;
  /// The AOTInductor package the step runs (the compile cache entry's artifact; the record's
  /// compile.package), and how its random ops draw (inductor train; compile.random_ops). The
  /// verifier reports the same two for the package it ran (verification.package, .random_ops).
  std::string package;
  std::string random_ops;
};

/// A compile_report whose compile_time_s is the wall time since `started`.
[[nodiscard]] compile_report compile_report_since(std::chrono::steady_clock::time_point started);

struct backend_step {
  step_function step;
  std::optional<compile_report> compile;  // nullopt for eager (nothing to prepare)
  /// For --save-ir-format text and --dump-hlo (profiler/ir_dump.hpp): the traced TorchScript
  /// graph as text (torchscript, inductor), and the AOTInductor package holding the generated
  /// sources (inductor). Empty for backends that run the model's own C++ code.
  std::string ir_text;
  std::filesystem::path compiled_package;
  /// What the CUDA graphs captured while the step was built needed (backends/capture_memory.hpp;
  /// set by make_backend_step, not by the factories); nullopt when none was captured.
  std::optional<capture_memory> graph_capture;
};

/// A backend that cannot run this config (e.g. a train step that CUDA graphs cannot capture): the
/// child writes a SKIP record with the message instead of an error.
class backend_unsupported : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The step of the experiment's backend (backends/backend_registry.hpp), built by the step factory
/// its descriptor names (backends/backend_steps.hpp). Throws backend_unsupported for a config the
/// backend cannot run (its descriptor's reason, or one found while building), std::runtime_error for a backend this build lacks (backends/availability.hpp).
[[nodiscard]] backend_step make_backend_step(const experiment_config& experiment,
                                             model_instance& model, const step_options& options,
                                             const backend_context& context);

/// Tests only: every step make_backend_step returns afterwards is passed through `wrap` (the test
/// build's perturbing and throwing backends, tests/faulty). Eager reference runs are not wrapped.
void set_test_backend_wrapper(std::function<step_function(step_function)> wrap);

}  // namespace benchmatrix
