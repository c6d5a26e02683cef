// The vocabulary of the precision and Inductor-mode axes (issue 52): one list of names for the
// flags (--precision, --inductor-mode), the matrix presets, the records' experiment object and the
// reports' labels. Torch-free: the parent and the report tools read it.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace benchmatrix {

/// --precision values:
///   auto      the suite's rule (suites/precision_rule.hpp: CUDA and CPU inference cast to bfloat16,
///             CUDA training under float16 autocast, the YAML's force_amp/force_fp16 models); the
///             default, and what every record without a "precision" key ran with
///   float32   no cast, no autocast
///   bfloat16  the module and its floating inputs cast to bfloat16
///   float16   cast to float16
///   amp       float32 weights, forward and loss under float16 autocast
///   amp_bf16  the same under bfloat16 autocast
inline constexpr std::array<std::string_view, 6> precision_names = {
    "auto", "float32", "bfloat16", "float16", "amp", "amp_bf16"};
inline constexpr std::string_view default_precision = "auto";

/// --inductor-mode values (the inductor backend only):
///   default       AOTInductor's defaults (what every record without an "inductor_mode" key ran)
///   max-autotune  Inductor's max_autotune and coordinate_descent_tuning, as torch.compile's
///                 mode="max-autotune" sets them (benchmatrix replays CUDA graphs in either mode)
inline constexpr std::array<std::string_view, 2> inductor_mode_names = {"default", "max-autotune"};
inline constexpr std::string_view default_inductor_mode = "default";

[[nodiscard]] bool is_precision_name(std::string_view name);
[[nodiscard]] bool is_inductor_mode_name(std::string_view name);

/// Whether `name` belongs to the axis `key` ("precision" or "inductor_mode"); the other keys have
/// no vocabulary here. Throws std::invalid_argument for another key.
[[nodiscard]] bool is_axis_name(std::string_view key, std::string_view name);
/// "auto, float32, ..." or "default, max-autotune", by key as is_axis_name.
[[nodiscard]] std::string axis_name_list(std::string_view key);

/// The names as a flag's choices.
[[nodiscard]] std::vector<std::string> precision_choices();
[[nodiscard]] std::vector<std::string> inductor_mode_choices();

/// "auto, float32, bfloat16, float16, amp, amp_bf16" (for messages).
[[nodiscard]] std::string precision_name_list();
[[nodiscard]] std::string inductor_mode_name_list();

}  // namespace benchmatrix
