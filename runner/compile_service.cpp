#include "runner/compile_service.hpp"

#include "core/log.hpp"
#include "process/child_process.hpp"
#include "process/helper_python.hpp"

#include <cstdlib>
#include <stdexcept>

namespace benchmatrix {

sweep_compile_service::sweep_compile_service(const std::filesystem::path& socket_directory,
                                             const std::filesystem::path& output_directory,
                                             bool import_at_start) {
  if (const char* previous = std::getenv(helper_service_variable))
    m_previous = previous;
  auto environment = current_environment();
  environment.erase(helper_service_variable);
  environment["PYTHONPATH"] = helper_python_path();
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
