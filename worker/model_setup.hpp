// Building a config's model as a child runs it (xla_runner.md §7.2-§7.4): the batch size (CLI >
// YAML > model default), a fresh model from seed 1337, the precision rules (AMP, bf16/fp16
// inference casts), and the step options of its test. Shared by the timing child and the verifier.
#pragma once

#include "backends/backend.hpp"
#include "core/child_job.hpp"
#include "core/experiment_config.hpp"
#include "suites/precision_rule.hpp"
#include "suites/suite_config.hpp"

#include <optional>
#include <string>

namespace benchmatrix {

struct prepared_model {
  model_instance model;
  step_options step;
  /// The precision rules' decision it was built with (the verifier's tolerance depends on it).
  precision_plan precision;
};

/// A model's batch size for one config, and why a requested one was not used.
struct batch_size_choice {
  long long batch_size = 1;
  /// Set when --batch-size or the YAML's batch_size entry was ignored (the model does not allow
  /// changing its batch size, or is in dont_change_batch_size): the warning to log.
  std::optional<std::string> ignored;
};

/// TorchBench's order (dynamo_bench.md §3, §5.0): the model's own default when it does not allow
/// customising it (ALLOW_CUSTOMIZE_BSIZE=False) or is in dont_change_batch_size; otherwise
/// --batch-size, then the YAML's batch_size.{training|inference}.<model>, then the model's default.
/// The default is DEFAULT_TRAIN_BSIZE for train, DEFAULT_EVAL_BSIZE for eval, or the model's CPU
/// eval default on the CPU where it has one (BERT_pytorch: 2). `config` may be null.
[[nodiscard]] batch_size_choice resolve_batch_size(const model_definition& definition,
                                                   const child_settings& settings,
                                                   const suite_config* config, bool training,
                                                   bool cpu);

/// Python's nn.Module.to(dtype): only floating-point parameters and buffers change dtype. LibTorch's
/// Module::to(dtype) casts every tensor, integer buffers included (BatchNorm's num_batches_tracked,
/// index tables such as dlrm's interaction indices), which would turn indices into bfloat16.
void convert_floating_point_state(torch::nn::Module& module, torch::ScalarType dtype);

/// §1.7: float32 matmul precision "high" (TF32) unless --disable-tf32 (then --matmul-precision).
void apply_matmul_precision(const child_settings& settings);

/// Builds the model afresh (RNG reset to 1337 first, so every call gives the same weights and
/// inputs) at resolve_batch_size's batch (logging a warning when it ignores a requested one) and
/// applies the config's precision (suites/precision_rule.hpp). `force_dtype` (the verifier's
/// float64 golden run) casts the module and floating inputs to that dtype instead, with AMP off;
/// it must be float16, bfloat16 or float64.
[[nodiscard]] prepared_model prepare_model(const model_definition& definition,
                                           const child_settings& settings,
                                           const suite_config* config,
                                           const experiment_config& experiment,
                                           std::optional<torch::ScalarType> force_dtype = {});

}  // namespace benchmatrix
