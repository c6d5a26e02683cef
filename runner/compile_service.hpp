// The sweep's compile service (issue 22; process/helper_service.hpp): started once per sweep,
// before the compile-ahead phase, when some config will run a Python helper (the inductor and
// openxla compiles, the huggingface/timm_models import), unless --no-compile-service. Its socket
// lies in the sweep's private scratch directory, its log is <output-dirname>/compile-service.log,
// and the children find it through BENCHMATRIX_HELPER_SERVICE in their environment (set in this
// process's environment while the service runs, which child_environment copies).
#pragma once

#include "process/helper_service.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace benchmatrix {

class sweep_compile_service {
public:
  /// Starts the service; a service that cannot start is a warning (the helpers then run as
  /// processes of their own, as with --no-compile-service). `import_at_start`: import torch at
  /// once (before a compile-ahead phase, when nothing is timed), else at the first request.
  sweep_compile_service(const std::filesystem::path& socket_directory,
                        const std::filesystem::path& output_directory, bool import_at_start);
  /// Stops the service (SIGTERM, then SIGKILL) and restores BENCHMATRIX_HELPER_SERVICE.
  ~sweep_compile_service();
  sweep_compile_service(const sweep_compile_service&) = delete;
  sweep_compile_service& operator=(const sweep_compile_service&) = delete;

  /// Whether a service runs (false when it could not start).
  [[nodiscard]] bool running() const { return m_service != nullptr; }

private:
  std::unique_ptr<helper_service> m_service;
  std::optional<std::string> m_previous; // BENCHMATRIX_HELPER_SERVICE before, if it was set
};

/// Whether a config on `suite` with `backend_compiles_into_cache` (compiles_into_cache of its
/// experiment) runs a Python helper when it misses its cache.
[[nodiscard]] bool runs_python_helper(const std::string& suite, bool backend_compiles_into_cache);

/// --no-compile-service: the children run their helpers as processes of their own, even if this
/// process's environment names a service.
void without_compile_service();

} // namespace benchmatrix
