// What the inductor backend compiles of a model that has a torch.export package (imported models;
// model_instance::exported_program), chosen by BENCHMATRIX_INDUCTOR_PROGRAM. Torch-free: the parent
// checks the variable before the sweep, the child reads it when it builds the model.
#pragma once

namespace benchmatrix {

enum class inductor_program {
  exported,  // the forward exported by torch.export (the import helper's exported.pt2): default
  traced,    // the forward traced by LibTorch, converted by TS2EPConverter (before eee2099)
};

/// BENCHMATRIX_INDUCTOR_PROGRAM: "exported" (unset or empty: the default) or "traced", for an A/B
/// of the two (bench/inductor_program_ab_gpu.sh) and as a way around a package Inductor fails on.
/// A user's .pt2 has only its package, whatever it says. Throws std::invalid_argument naming the
/// value and the choices.
[[nodiscard]] inductor_program inductor_program_choice();

}  // namespace benchmatrix
