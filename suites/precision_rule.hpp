// The precision rules of a model's setup (shared/reference/xla_runner.md §7.3) as a pure decision:
// whether the step runs under AMP and which floating dtype the module and its floating inputs are
// cast to. Torch-free, so that tests/unit checks every branch without LibTorch or a GPU;
// worker/model_setup.cpp applies the decision to the built model.
#pragma once

#include <optional>
#include <string>

namespace benchmatrix {

/// A floating dtype a model's parameters, buffers and floating inputs are cast to.
enum class cast_dtype { float16, bfloat16, float64 };

/// "float16" | "bfloat16" | "float64".
[[nodiscard]] const char* cast_dtype_name(cast_dtype dtype);

struct precision_request {
  bool training = false;    // test=train
  bool cuda = false;        // accelerator=cuda: AMP exists only there (the CPU never autocasts)
  bool force_amp = false;   // the model is in dtype.force_amp_for_fp16_bf16_models
  bool force_fp16 = false;  // the model is in dtype.force_fp16_for_bf16_models
  /// The config's --precision (core/precision_axes.hpp): "auto" applies the rules below; any
  /// other value is what the step computes in, whatever the rules say.
  std::string requested = "auto";
  /// The verifier's golden run (float64): cast to this, AMP off, whatever the rules above say.
  std::optional<cast_dtype> forced;
};

struct precision_plan {
  bool use_amp = false;            // autocast around forward and loss (no GradScaler)
  std::optional<cast_dtype> cast;  // nullopt: the model's own dtype (float32)
  /// Autocast's dtype when use_amp: float16 (the rule's, and --precision=amp) or bfloat16
  /// (--precision=amp_bf16).
  cast_dtype amp_dtype = cast_dtype::float16;
  bool operator==(const precision_plan&) const = default;

  /// Whether the verifier takes PyTorch's float16 tolerances: a float16 cast, or autocast of
  /// either dtype (PyTorch's harness applies them to --amp whatever its --amp-dtype).
  [[nodiscard]] bool float16() const { return use_amp || cast == cast_dtype::float16; }
  /// Whether it computes in bfloat16 without autocast (a bfloat16 cast).
  [[nodiscard]] bool bfloat16() const { return !use_amp && cast == cast_dtype::bfloat16; }
};

/// What a plan computes in, for records: "float16 autocast", "bfloat16 autocast", or the cast's
/// dtype, or "float32".
[[nodiscard]] const char* precision_plan_name(const precision_plan& plan);

/// The rules, in order:
///  1. `forced`: cast to it, AMP off.
///  1b. `requested` other than "auto": float32 (no cast, no AMP), bfloat16 or float16 (cast),
///     amp (float16 autocast), amp_bf16 (bfloat16 autocast), on the CPU as on CUDA. Throws
///     std::invalid_argument for a name core/precision_axes.hpp does not list.
///  2. AMP on CUDA for training and for force_amp models; never on the CPU.
///  3. training or AMP: no cast (float32 master weights).
///  4. inference without AMP: float16 for force_fp16 models, otherwise bfloat16 (the dashboard's
///     inference precision).
[[nodiscard]] precision_plan choose_precision(const precision_request& request);

}  // namespace benchmatrix
