#include "runner/compile_service.hpp"

#include "core/log.hpp"
#include "process/child_process.hpp"

#include <cstdlib>
#include <stdexcept>

#ifndef BENCHMATRIX_PYTHON
#define BENCHMATRIX_PYTHON "python3"
#endif
#ifndef BENCHMATRIX_PYTHON_PATH
#error "BENCHMATRIX_PYTHON_PATH (the folder holding benchmatrix_service) must be defined"
#endif

namespace benchmatrix {
namespace {

/// The helpers' Python (inductor_backend's compile_helper_python, imported_suites' helper_python):
/// the service serves only requests for this interpreter.
std::string helper_python() {
  if (const char* python = std::getenv("BENCHMATRIX_PYTHON"); python && *python)
    return python;
  return BENCHMATRIX_PYTHON;
}

} // namespace

sweep_compile_service::sweep_compile_service(const std::filesystem::path& socket_directory,
                                             const std::filesystem::path& output_directory,
                                             bool import_at_start) {
  if (const char* previous = std::getenv(helper_service_variable))
    m_previous = previous;
  auto environment = current_environment();
  environment.erase(helper_service_variable);
  std::string python_path = BENCHMATRIX_PYTHON_PATH;
  if (const char* existing = std::getenv("PYTHONPATH"); existing && *existing)
    python_path += std::string(":") + existing;
  environment["PYTHONPATH"] = python_path;
  const auto log_path = output_directory / "compile-service.log";
  try {
    std::filesystem::create_directories(output_directory);
    m_service = std::make_unique<helper_service>(helper_python(), environment, socket_directory,
                                                 log_path, import_at_start);
  } catch (const std::exception& e) {
    log_warning(std::string(e.what()) + "; the compile helpers run as processes of their own");
    ::unsetenv(helper_service_variable);
    return;
  }
  ::setenv(helper_service_variable, m_service->socket().c_str(), 1);
  log_info("compile service started (" + helper_python() + " -m benchmatrix_service; log " +
           log_path.string() + ")");
}

sweep_compile_service::~sweep_compile_service() {
  m_service.reset();
  if (m_previous)
    ::setenv(helper_service_variable, m_previous->c_str(), 1);
  else
    ::unsetenv(helper_service_variable);
}

bool runs_python_helper(const std::string& suite, bool backend_compiles_into_cache) {
  return backend_compiles_into_cache || suite == "huggingface" || suite == "timm_models";
}

void without_compile_service() {
  ::unsetenv(helper_service_variable);
}

} // namespace benchmatrix
