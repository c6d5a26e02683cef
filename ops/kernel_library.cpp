#include "ops/kernel_library.hpp"

#include <dlfcn.h>
#include <exception>
#include <stdexcept>
#include <string>

namespace benchmatrix {

void load_kernel_library(const std::filesystem::path& path) {
  const std::string shown = path.string();
  if (!std::filesystem::is_regular_file(path))
    throw std::runtime_error("kernel library " + shown + ": no such file");
  void* handle = nullptr;
  try {
    handle = ::dlopen(std::filesystem::absolute(path).c_str(), RTLD_NOW | RTLD_GLOBAL);
  } catch (const std::exception& e) { // a static registrar threw (c10::Error)
    throw std::runtime_error("kernel library " + shown +
                             ": registering its kernels failed: " + e.what());
  }
  if (!handle) {
    const char* reason = ::dlerror();
    throw std::runtime_error("kernel library " + shown +
                             ": dlopen failed: " + (reason ? reason : "unknown reason"));
  }
}

} // namespace benchmatrix
