#include "process/helper_python.hpp"

#include <cstdlib>

// Defined for this file alone by CMakeLists.txt (a definition on a header would rebuild every
// file that includes it).
#ifndef BENCHMATRIX_PYTHON
#error "BENCHMATRIX_PYTHON (the configured Python) must be defined"
#endif
#ifndef BENCHMATRIX_PYTHON_PATH
#error "BENCHMATRIX_PYTHON_PATH (the folder holding the benchmatrix_* helpers) must be defined"
#endif

namespace benchmatrix {

std::string helper_python() {
  if (const char* python = std::getenv("BENCHMATRIX_PYTHON"); python && *python) return python;
  return BENCHMATRIX_PYTHON;
}

std::string helper_sources_dir() { return BENCHMATRIX_PYTHON_PATH; }

std::string helper_python_path(const std::string& extra) {
  std::string path = BENCHMATRIX_PYTHON_PATH;
  if (!extra.empty()) path += ":" + extra;
  if (const char* existing = std::getenv("PYTHONPATH"); existing && *existing)
    path += std::string(":") + existing;
  return path;
}

}  // namespace benchmatrix
