// dynamo=inductor through AOTInductor: the forward traced to TorchScript (traced_graph.hpp), compiled
// by the compile helper (python/benchmatrix_compile: TorchScript -> ExportedProgram ->
// aoti_compile_and_package, in its own process with the pip torch), cached by content hash
// (core/compile_cache.hpp) with its files extracted beside it, loaded from there
// (backends/aoti_package.hpp) and — on CUDA — replayed under a CUDA graph, as the seed's runner
// turns on Inductor's CUDA graphs.
// test=train: the joint forward+backward train step, backends/inductor_train_step.hpp.
#pragma once

#include "backends/backend.hpp"
#include "core/compile_cache.hpp"

namespace benchmatrix {

/// The environment variables that change what the compile helper builds, as "; NAME=value" for
/// each one set (empty when none is): AOT_INDUCTOR_COMPILE_WRAPPER_OPT_LEVEL (the wrapper's g++
/// level; unset, CUDA forward packages build it at O0), TORCHINDUCTOR_VEC_ISA_OK (the CPU vector
/// ISA probes; unset, CUDA packages skip them), BENCHMATRIX_WEIGHTS_IN_LIBRARY (1: the weights
/// linked into the wrapper library; unset, a file beside it) and BENCHMATRIX_CONV_BACKWARD_LAYOUT
/// (0: the train step's convolution_backward at the traced NCHW strides; unset, channels-last
/// where Inductor picks it). Part of each package's description,
/// hence of its cache key, so that a package built under one setting is not reused under another.
[[nodiscard]] std::string compile_helper_settings();

/// Every Python source of the compile helper (python/benchmatrix_compile/*.py), each as its file
/// name, a newline and its text, in name order: part of each package's cache key, so that a change
/// to any module the helper runs (train_step.py, conv_backward_layout.py, runtime_apart.py, ...)
/// rebuilds the packages it would build differently. Throws std::runtime_error when the folder
/// cannot be read.
[[nodiscard]] std::string compile_helper_sources();

/// How the config's --inductor-mode and --precision read in a package's description, hence its
/// cache key: "; AOTInductor defaults" for the default mode (the key every earlier package has),
/// else "; Inductor mode <mode>"; then "; precision <precision>" where it is not auto. (The traced
/// graph differs between precisions anyway; the words let bench/torch_compile_anchor.py tell
/// the entries apart.)
[[nodiscard]] std::string inductor_mode_description(const std::string& mode,
                                                    const std::string& precision);

/// The compile helper's arguments for `mode`: none for default, else --inductor-mode <mode>.
[[nodiscard]] std::vector<std::string> inductor_mode_arguments(const std::string& mode);

/// The compile helper's --timings-json file in a package's cache entry (beside its artifact).
inline constexpr const char* compile_timings_name = "compile_timings.json";

/// The helper's timings (--timings-json) into `report`: the phase breakdown (eval), how it ran
/// (compile.helper: the compile service or a process), its compile threads and a freezing
/// failure. A missing or unreadable file leaves the report as it was, with a warning (the package
/// itself is fine; an entry built by an older helper has none).
void add_helper_timings(const std::filesystem::path& path, compile_report& report);

/// What a compile-only child (backend_context::compile_only) gets once the package is in the
/// cache: no step, `report` (its compile figures) and the package.
[[nodiscard]] backend_step compile_only_step(compile_report report, const cache_entry& entry);

[[nodiscard]] backend_step make_inductor_step(model_instance& model, const step_options& options,
                                              const backend_context& context);

}  // namespace benchmatrix
