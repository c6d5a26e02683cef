// The Python that runs the project's helpers (python -m benchmatrix_compile, benchmatrix_import,
// benchmatrix_service) and the PYTHONPATH that finds them: one place for what the inductor and
// XLA backends, the imported suites and the compile service all start.
#pragma once

#include <string>

namespace benchmatrix {

/// $BENCHMATRIX_PYTHON when set and not empty, else the interpreter the build was configured with
/// (the project's virtual environment under make).
[[nodiscard]] std::string helper_python();

/// The project's python/ folder: the helpers' sources (their text is part of some cache keys).
[[nodiscard]] std::string helper_sources_dir();

/// A helper's PYTHONPATH: helper_sources_dir(), then `extra` when not empty (the XLA export's
/// torchax), then the caller's $PYTHONPATH when set.
[[nodiscard]] std::string helper_python_path(const std::string& extra = "");

}  // namespace benchmatrix
