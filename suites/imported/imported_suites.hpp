// The suites whose models are not hand-written C++ but loaded programs: TorchScript
// (suites/imported/torchscript_program.hpp) and torch.export packages run by torch::nativert
// (suites/imported/exported_program.hpp):
//   huggingface, timm_models  the models of PyTorch's dynamo benchmark lists, listed in
//       <config dir>/huggingface_models_list.txt ("Name,batch_size" lines) and
//       <config dir>/timm_models_list.txt ("name batch_size" lines), the formats of PyTorch's
//       benchmarks/dynamo lists. The child builds each with python -m benchmatrix_import (random
//       weights, default configs, nothing downloaded) into <--cache-dir>/imported/<content hash>/
//       and loads its TorchScript program; for the inductor backend's eval the entry also holds
//       the forward exported by torch.export, which that backend compiles (no TorchScript round
//       trip). <config dir>/<suite>_model_overrides.yaml, when present, gives per-model config
//       keywords (tests shrink models with it).
//   exported  the user's own models: --model-path=FILE.pt (inputs in FILE.inputs.pt beside it),
//       FILE.pt2 (a torch.export package; its own example inputs unless FILE.inputs.pt is
//       beside it; eval only, by torch::nativert, after the helper moved it to the run's device
//       and cast it to its dtype), a directory of such files, or a directory holding model.pt and
//       inputs.pt (an import cache entry, named after the directory).
// Torch-free: the parent registers the names; only the child's build runs the helper and LibTorch.
#pragma once

#include <string>

namespace benchmatrix {

inline constexpr const char* exported_suite_name = "exported";

/// Registers the models of the list files found in `config_dir` (a suite whose list is missing
/// has no models). Throws std::runtime_error naming the file and line of a malformed entry.
void register_listed_suites(const std::string& config_dir);

/// Registers the models under --model-path in suite "exported". Throws std::runtime_error when the
/// path does not exist or holds no .pt or .pt2 program.
void register_exported_models(const std::string& model_path);

}  // namespace benchmatrix
