// An AOTInductor package (.pt2) kept extracted in its compile cache entry, and loaded from there.
//
// torch::inductor::AOTIModelPackageLoader extracts the whole archive of the model it loads — the
// wrapper .so with its weights, the kernels' cubins, the metadata — into a fresh /tmp/XXXXXX on
// every load, and removes it again when the loader goes: a warm hit re-wrote the package (1 GB for
// dlrm) once per process. Here the files are extracted once, when the package is built, into
// `<entry>/package/` (laid out as the loader lays out its temporary directory: the model's files
// and the weight constants side by side), checked with the rest of the entry by the compile cache
// (core/compile_cache.hpp), and a process loads them in place: the same runner
// (AOTIModelContainerRunnerCpu/Cuda from AOTInductor's runner registry, keyed by the package's
// AOTI_DEVICE_KEY), the same cubin directory and weight blob the loader would pass it.
#pragma once

#include <c10/core/Device.h>
#include <torch/csrc/inductor/aoti_runner/model_container_runner.h>

#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace benchmatrix {

/// The folder, in a compile cache entry, that holds its package's extracted files.
constexpr const char* extracted_package_folder = "package";

/// Part of the cache key of every package entry: entries made before the packages were kept
/// extracted have no such folder, and are not hit by a runner that loads from it.
constexpr const char* aoti_entry_layout = "the .pt2 and its files extracted in package/";

/// Extracts the files of the package's model "model" (data/aotinductor/model/...) and its
/// constants (data/constants/...) from the archive `pt2` into `folder` (created; it must not
/// exist), as AOTIModelPackageLoader extracts them. Throws std::runtime_error naming the archive
/// when it cannot be read or holds no wrapper library or source.
void extract_aoti_package(const std::filesystem::path& pt2, const std::filesystem::path& folder);

/// A package loaded from a folder extract_aoti_package wrote.
class extracted_aoti_package {
public:
  /// Loads the wrapper library of `folder` for `device` (the index of a CUDA device; CPU packages
  /// ignore it), single-threaded (no cross-runner event synchronisation, which CUDA graph capture
  /// forbids). Throws std::runtime_error naming the folder and what is wrong.
  extracted_aoti_package(const std::filesystem::path& folder, const c10::Device& device);

  /// One call of the compiled model on its flattened inputs.
  [[nodiscard]] std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) {
    return m_runner->run(inputs);
  }

  /// The package's metadata (the compile's AOTI_DEVICE_KEY and the helper's own entries).
  [[nodiscard]] const std::unordered_map<std::string, std::string>& metadata() const {
    return m_metadata;
  }

private:
  std::unordered_map<std::string, std::string> m_metadata;
  std::unique_ptr<torch::inductor::AOTIModelContainerRunner> m_runner;
};

}  // namespace benchmatrix
