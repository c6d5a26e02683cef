#include "backends/backend_steps.hpp"

#include <map>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// Function-local, so that registrations from any file's static initialisation find it built.
std::map<std::string, backend_step_factory>& step_factories() {
  static std::map<std::string, backend_step_factory> factories;
  return factories;
}

}  // namespace

backend_step_registration::backend_step_registration(const std::string& name,
                                                     backend_step_factory factory) {
  if (!step_factories().emplace(name, std::move(factory)).second)
    throw std::logic_error("backend step factory '" + name + "' is registered twice");
}

const backend_step_factory* find_backend_step_factory(const std::string& name) {
  const auto found = step_factories().find(name);
  return found == step_factories().end() ? nullptr : &found->second;
}

}  // namespace benchmatrix
