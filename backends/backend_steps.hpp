// The LibTorch side of the backend registry (backends/backend_registry.hpp): each backend's step
// factory registers under the name its descriptor's step_factory gives, from a namespace-scope
// object in its own file of benchmatrix_worker (an OBJECT library, so no registration is dropped).
#pragma once

#include "backends/backend.hpp"

#include <functional>
#include <string>

namespace benchmatrix {

/// Builds a backend's step for a built model (see make_backend_step).
using backend_step_factory =
    std::function<backend_step(model_instance&, const step_options&, const backend_context&)>;

/// `const backend_step_registration registered{"torchscript", factory};` at namespace scope.
/// Throws std::logic_error (at start-up) for a name registered twice.
struct backend_step_registration {
  backend_step_registration(const std::string& name, backend_step_factory factory);
};

/// The factory registered under `name`; nullptr when none is.
[[nodiscard]] const backend_step_factory* find_backend_step_factory(const std::string& name);

}  // namespace benchmatrix
