// --export/--export-dir: a config's tensors as .npy files plus one manifest.json, under
// <export_dir>/<export_config_name>/, for numeric_check to compare across runs, machines and
// library versions (shared/reference/kernel_evals.md §1.7, §6.7). Tensors are the leaves of the
// model's inputs (input_0, input_1, ...) and outputs (output_0, ...), in map_tensors order.
// bfloat16/float16 are widened to float32 exactly ('<f4'); integers and bool keep their own numpy
// dtype; the manifest keeps the original torch dtype and the SHA-256 of each array's data bytes
// (hashlib.sha256(numpy.load(f).tobytes()).hexdigest()), and the library versions the numbers came
// from (LibTorch, CUDA build, cuDNN on CUDA; benchmatrix's own revision is not recorded: a build-time
// revision goes stale between reconfigures, and one refreshed every build would relink every tool).
// When the output was asked for but the step returned no tensor (a train step without
// --collect-full-output), "note" says so. Every file is written to a temporary name and renamed
// into place.
#pragma once

#include "backends/backend.hpp"
#include "core/experiment_config.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace benchmatrix {

/// unique_basename (core/file_naming.hpp) + "-bs<batch size>", with any character outside
/// [A-Za-z0-9._-] replaced by '_': stable across runs and safe as a directory name.
[[nodiscard]] std::string export_config_name(const experiment_config& experiment,
                                             const std::string& model_name, long long batch_size);

struct export_identity {
  std::string model, suite, backend, test, accelerator, accelerator_model, device, torch_version;
  long long batch_size = 0;
  long long seed = 0;
  std::optional<std::string> cuda_version;  // the CUDA toolkit LibTorch was built with; null: none
  std::optional<long> cudnn_version;        // cuDNN loaded at run time; null: not run on CUDA
};

/// Writes the inputs and/or the output (either may be null: not exported) and the manifest into
/// `directory` (created), first removing the .npy files and manifest of an earlier export there.
/// Throws std::runtime_error naming the tensor or file when anything cannot be exported.
void write_numerics_export(const std::filesystem::path& directory, const export_identity& identity,
                           const model_inputs* inputs, const c10::IValue* output);

}  // namespace benchmatrix
