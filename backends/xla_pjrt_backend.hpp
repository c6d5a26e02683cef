// xla=PJRT, dynamo=openxla: the whole forward compiled by XLA and run through the PJRT C API, with
// no torch_xla and no Python at run time.
//
//   1. the forward traced to TorchScript (traced_graph.hpp), as for inductor;
//   2. the compile helper (python -m benchmatrix_compile --format=stablehlo: TorchScript ->
//      ExportedProgram -> torchax -> jax.export) writes a StableHLO module, its weights and the
//      compile options into the compile cache (core/compile_cache.hpp, content-hash key);
//   3. the PJRT plugin (BENCHMATRIX_PJRT_PLUGIN, else JAX's CUDA plugin found by the helper's
//      Python) compiles the module (xla_CompileTime_*), the weights go to device buffers once, the
//      inputs are viewed in place (CUDA tensors) and each step executes and awaits the program
//      (xla_ExecuteTime_*); outputs become torch tensors without copies where the layout allows.
//
// Train: the joint train step of the inductor train step (train_step.py: loss, prediction, every
// parameter's gradient, the updated buffers of forward(*parameters, *buffers, *inputs)) exported
// to StableHLO the same way, the state as module inputs; per step the gradients go into the
// parameters' .grad, the buffers are copied back and eager's optimizer steps. Random ops take a
// per-step seed (JAX's generator: not eager's masks; --verify therefore runs such a step with its
// dropout off, exported apart: worker/verify_child.cpp). Without the PJRT C API
// header at build time, or without a plugin at run time, configs are SKIP records that say how to
// enable them. BENCHMATRIX_XLA_EXPORT_ONLY=1 stops after step 2 with a SKIP record naming the
// export (what CI checks on the CPU, for which no PJRT plugin exists).
#pragma once

#include "backends/backend.hpp"

namespace benchmatrix {

[[nodiscard]] backend_step make_xla_pjrt_step(model_instance& model, const step_options& options,
                                              const backend_context& context);

/// Whether the train step of `model`, traced as `options` say (options.module_mode), exports to
/// a program that draws random numbers (takes a seed: dropout with XLA's generator, whose masks
/// are not eager's). The export comes from the compile cache (the entry
/// the timing child made) or is made there, as make_xla_pjrt_step's. Throws backend_unsupported
/// when the step cannot be traced or exported. The --verify child's choice of module mode.
[[nodiscard]] bool xla_train_step_draws_random(model_instance& model, const step_options& options,
                                               const backend_context& context);

}  // namespace benchmatrix
