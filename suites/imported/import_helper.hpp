// python -m benchmatrix_import, run by the child for one imported model (python/benchmatrix_import):
// its arguments for the run's test, device and dtype, its cache under --cache-dir, and its exit
// status turned into the child's exceptions.
#pragma once

#include "suites/model.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace benchmatrix {

/// Runs python -m benchmatrix_import for one model (`model_arguments`: which one and how, e.g.
/// --suite huggingface --model X --batch-size 4) into <o.cache_dir>/imported/; returns the cache
/// entry's directory. Throws model_unavailable when the helper cannot build the model here (exit
/// status 3: a download, a missing package or file; 5: the model does not implement the test),
/// std::runtime_error with the helper's output for any other failure.
[[nodiscard]] std::filesystem::path import_model(const std::string& what,
                                                 std::vector<std::string> model_arguments,
                                                 const model_build_options& o);

/// The traced program of an import cache entry (model.pt, inputs.pt) loaded for `o.device`, its
/// model_source saying `kind` and the entry; with `with_exported_program`, the entry's
/// exported.pt2 for the inductor backend, or the reason torch.export failed (logged: the traced
/// program is compiled instead). `what` names the model in the warning ("suite/model").
[[nodiscard]] model_instance load_traced_entry(const std::filesystem::path& entry,
                                               const std::string& what, const std::string& kind,
                                               bool with_exported_program,
                                               const model_build_options& o);

}  // namespace benchmatrix
