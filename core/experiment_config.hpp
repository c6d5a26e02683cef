// One point of the experiment matrix (shared/reference/xla_runner.md §2.1) and its JSON forms. The
// expansion of the matrix from the command line is runner/experiment_matrix.hpp.
#pragma once

#include "core/precision_axes.hpp"
#include "core/python_json.hpp"

#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

using nullable_string = std::optional<std::string>;  // nullopt is JSON null / Python None

struct experiment_config {
  std::string accelerator;       // cpu | cuda | tpu
  nullable_string xla;           // null | PJRT | XRT
  nullable_string xla_flags;     // null | free text forwarded as XLA_FLAGS
  nullable_string dynamo;        // null (eager) | inductor | openxla
  nullable_string torch_xla2;    // null | extract_jax | torch_export
  std::string test;              // eval | train
  bool keep_model_data_on_cuda = false;
  bool enable_functionalization = false;
  // benchmatrix's axes beyond the original's (issue 52; core/precision_axes.hpp). At their defaults
  // they are left out of every JSON form, so that a default config's records and --experiment-config
  // are the original's, byte for byte.
  std::string precision{default_precision};          // auto | float32 | bfloat16 | ...
  std::string inductor_mode{default_inductor_mode};  // default | max-autotune (inductor only)

  /// Whether precision or inductor_mode differ from their defaults.
  [[nodiscard]] bool has_benchmatrix_axes() const {
    return precision != default_precision || inductor_mode != default_inductor_mode;
  }

  /// The config dict the parent passes as --experiment-config, keys in the original's order:
  /// accelerator, xla, xla_flags, dynamo, torch_xla2, test, keep_model_data_on_cuda,
  /// enable_functionalization; then precision and inductor_mode where not at their defaults.
  [[nodiscard]] std::string to_config_json() const;
  /// Parses --experiment-config (accelerator lower-cased, as the original does). Throws
  /// std::runtime_error naming the missing or mistyped key, or a precision or inductor_mode that
  /// is not one of core/precision_axes.hpp's names.
  [[nodiscard]] static experiment_config from_config_json(const std::string& text);

  /// The record's "experiment" object (§5.2 order): accelerator, accelerator_model, xla, xla_flags,
  /// dynamo, torch_xla2, keep_model_data_on_cuda, test, batch_size (null when absent),
  /// enable_functionalization; then precision and inductor_mode where not at their defaults.
  [[nodiscard]] json_value to_record_json(const std::string& accelerator_model,
                                          std::optional<long long> batch_size,
                                          json_allocator& allocator) const;

  /// "accelerator=cuda xla=None dynamo=inductor test=eval" for log and progress lines (then
  /// " precision=bfloat16", " inductor_mode=max-autotune" where not at their defaults).
  [[nodiscard]] std::string describe() const;
};

}  // namespace benchmatrix
