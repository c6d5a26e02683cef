#include "kernel_check/kernel_build.hpp"

#include "core/compile_cache.hpp"
#include "core/content_hash.hpp"
#include "core/text_file.hpp"
#include "process/child_process.hpp"
#include "process/helper_process.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

// Baked in by CMakeLists.txt (on this file only): LibTorch's paths and versions, the compilers.
#ifndef BENCHMATRIX_TORCH_DIR
#error "BENCHMATRIX_TORCH_DIR (the torch package: include/, lib/) must be defined"
#endif
#ifndef BENCHMATRIX_TORCH_VERSION
#define BENCHMATRIX_TORCH_VERSION "unknown"
#endif
#ifndef BENCHMATRIX_CXX_COMPILER
#define BENCHMATRIX_CXX_COMPILER "g++"
#endif
#ifndef BENCHMATRIX_CXX_COMPILER_VERSION
#define BENCHMATRIX_CXX_COMPILER_VERSION "unknown"
#endif
#ifndef BENCHMATRIX_NVCC
#define BENCHMATRIX_NVCC "/usr/local/cuda/bin/nvcc"
#endif
#ifndef BENCHMATRIX_CUDA_VERSION
#define BENCHMATRIX_CUDA_VERSION "unknown"
#endif
#ifndef BENCHMATRIX_CUDA_ROOT
#define BENCHMATRIX_CUDA_ROOT "/usr/local/cuda"
#endif
#ifndef BENCHMATRIX_SOURCE_DIR
#error "BENCHMATRIX_SOURCE_DIR must be defined"
#endif
#ifndef BENCHMATRIX_PYTHON
#define BENCHMATRIX_PYTHON "python3"
#endif

namespace benchmatrix {
namespace fs = std::filesystem;

namespace {

constexpr const char* library_name = "module.so";
constexpr const char* source_placeholder = "{source}";
constexpr const char* output_placeholder = "{output}";
constexpr const char* includes_placeholder = "{include_dirs}";

/// The compiler's argv with placeholders for the source and the output (the key must not depend on
/// where the source lives or where the cache stages its build).
std::vector<std::string> command_template(kernel_language language, const std::string& cuda_arch) {
  const std::string torch = BENCHMATRIX_TORCH_DIR;
  const std::vector<std::string> includes = {"-I" + std::string(BENCHMATRIX_SOURCE_DIR),
                                             "-I" + torch + "/include",
                                             "-I" + torch + "/include/torch/csrc/api/include"};
  std::vector<std::string> argv;
  if (language == kernel_language::cuda) {
    argv = {BENCHMATRIX_NVCC, "-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC,-fvisibility=hidden",
            "-gencode", "arch=compute_" + cuda_arch + ",code=sm_" + cuda_arch,
            "--expt-relaxed-constexpr", "-D__CUDA_NO_HALF_OPERATORS__",
            "-D__CUDA_NO_HALF_CONVERSIONS__", "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
            "-D__CUDA_NO_HALF2_OPERATORS__", "-D_GLIBCXX_USE_CXX11_ABI=1",
            "-ccbin", BENCHMATRIX_CXX_COMPILER};
    argv.insert(argv.end(), includes.begin(), includes.end());
    argv.push_back(includes_placeholder);
    argv.push_back("-I" + std::string(BENCHMATRIX_CUDA_ROOT) + "/include");
    argv.insert(argv.end(), {source_placeholder, "-o", output_placeholder, "-L" + torch + "/lib",
                             "-Xlinker", "-rpath," + torch + "/lib", "-ltorch", "-ltorch_cpu",
                             "-lc10", "-ltorch_cuda", "-lc10_cuda",
                             "-L" + std::string(BENCHMATRIX_CUDA_ROOT) + "/lib64", "-lcudart"});
  } else {
    argv = {BENCHMATRIX_CXX_COMPILER, "-std=c++17", "-O2", "-fPIC", "-shared",
            "-fvisibility=hidden", "-D_GLIBCXX_USE_CXX11_ABI=1"};
    argv.insert(argv.end(), includes.begin(), includes.end());
    argv.push_back(includes_placeholder);
    argv.insert(argv.end(), {source_placeholder, "-o", output_placeholder, "-L" + torch + "/lib",
                             "-Wl,-rpath," + torch + "/lib", "-ltorch", "-ltorch_cpu", "-lc10"});
  }
  return argv;
}

std::string joined(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& a : argv) text += (text.empty() ? "" : " ") + a;
  return text;
}

/// The placeholders replaced; {include_dirs} expands to one -I per directory (none: removed).
std::vector<std::string> substituted(const std::vector<std::string>& argv, const std::string& source,
                                     const std::string& output,
                                     const std::vector<fs::path>& include_dirs) {
  std::vector<std::string> result;
  for (const auto& a : argv) {
    if (a == source_placeholder) result.push_back(source);
    else if (a == output_placeholder) result.push_back(output);
    else if (a == includes_placeholder)
      for (const auto& directory : include_dirs) result.push_back("-I" + fs::absolute(directory).string());
    else result.push_back(a);
  }
  return result;
}

/// The template as hashed: without the {include_dirs} placeholder, so run_and_check's keys stay
/// those of the tool's first version.
std::vector<std::string> hashed_template(std::vector<std::string> argv) {
  argv.erase(std::remove(argv.begin(), argv.end(), std::string(includes_placeholder)), argv.end());
  return argv;
}

}  // namespace

kernel_language language_of(const fs::path& source) {
  const auto extension = source.extension().string();
  if (extension == ".py") return kernel_language::python;
  if (extension == ".cu") return kernel_language::cuda;
  if (extension == ".cpp" || extension == ".cc" || extension == ".cxx") return kernel_language::cpp;
  throw std::invalid_argument(source.string() +
                              ": expected a .py (KernelBench), .cpp/.cc/.cxx or .cu source");
}

const char* language_name(kernel_language language) {
  switch (language) {
    case kernel_language::cpp: return "cpp";
    case kernel_language::cuda: return "cuda";
    case kernel_language::python: return "python";
  }
  return "?";
}

std::string benchmatrix_source_dir() { return BENCHMATRIX_SOURCE_DIR; }

std::string benchmatrix_torch_version() { return BENCHMATRIX_TORCH_VERSION; }

std::string benchmatrix_python() {
  if (const char* python = std::getenv("BENCHMATRIX_PYTHON"); python && *python) return python;
  return BENCHMATRIX_PYTHON;
}

kernel_build describe_kernel_build(const fs::path& source, const std::string& cuda_arch,
                                   const kernel_build_options& options) {
  const auto language = language_of(source);
  if (language == kernel_language::python)
    throw std::invalid_argument("describe_kernel_build: " + source.string() + " is Python");
  if (!fs::is_regular_file(source)) throw std::runtime_error("cannot read " + source.string());
  const auto argv = command_template(language, cuda_arch);
  kernel_build build;
  build.command = joined(substituted(argv, source.string(), library_name, options.include_dirs));
  build.description = std::string(language_name(language)) + " module " +
                      source.filename().string() + "; torch " + BENCHMATRIX_TORCH_VERSION +
                      "; " + BENCHMATRIX_CXX_COMPILER + " " + BENCHMATRIX_CXX_COMPILER_VERSION +
                      (language == kernel_language::cuda
                           ? std::string("; CUDA ") + BENCHMATRIX_CUDA_VERSION + "; sm_" + cuda_arch
                           : std::string());
  const std::string header =
      read_text_file(fs::path(BENCHMATRIX_SOURCE_DIR) / options.header);
  sha256_hasher hasher;
  hasher.add_field("tool", options.tool)
      .add_field("language", language_name(language))
      .add_file(source);
  hasher.add_field("header", header)
      .add_field("command", joined(hashed_template(argv)))
      .add_field("compiler_version", BENCHMATRIX_CXX_COMPILER_VERSION)
      .add_field("torch_version", BENCHMATRIX_TORCH_VERSION);
  if (language == kernel_language::cuda)
    hasher.add_field("cuda_version", BENCHMATRIX_CUDA_VERSION).add_field("cuda_arch", cuda_arch);
  build.key = hasher.hex();
  return build;
}

kernel_build build_kernel_module(const fs::path& source, const fs::path& cache_root,
                                 const std::string& cuda_arch, const kernel_build_options& options) {
  kernel_build build = describe_kernel_build(source, cuda_arch, options);
  const auto argv = command_template(language_of(source), cuda_arch);
  compile_cache cache(cache_root);
  const auto started = std::chrono::steady_clock::now();
  struct compiler_failed {
    std::string output;
  };
  try {
    const cache_entry entry = cache.get_or_build(
        build.key, library_name, build.description, /*rebuild=*/false,
        [&](const fs::path& directory) {
          const auto full = substituted(argv, fs::absolute(source).string(),
                                        (directory / library_name).string(), options.include_dirs);
          const helper_result result =
              run_helper(full, current_environment(), directory / "compile.log");
          if (!result.exit.success())
            throw compiler_failed{"the compiler " + result.exit.describe() + ":\n" +
                                  result.output_tail};
        });
    build.compiled = true;
    build.library = entry.artifact;
    build.cache_hit = entry.hit;
    build.rebuilt_because = entry.rebuilt_because;
    build.build_seconds = entry.build_seconds;
    build.seconds = entry.hit ? 0 : entry.build_seconds;
  } catch (const compiler_failed& failure) {
    build.compiled = false;
    build.error = failure.output;
    build.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  return build;
}

std::string cuda_arch_of_device(int index) {
  if (const char* arch = std::getenv("BENCHMATRIX_CUDA_ARCH"); arch && *arch) return arch;
  const std::string command = "nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i " +
                              std::to_string(index) + " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  std::string text;
  if (pipe) {
    std::array<char, 128> buffer{};
    while (std::fgets(buffer.data(), buffer.size(), pipe.get())) text += buffer.data();
  }
  std::string digits;
  for (char c : text) {
    if (c >= '0' && c <= '9') digits += c;
    if (c == '\n') break;
  }
  return digits.empty() ? "90" : digits;
}

}  // namespace benchmatrix
