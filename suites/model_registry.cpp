#include "suites/model.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// suite -> model name -> definition. A function-local static, so registration from other
/// translation units' static initialisers is safe whatever the initialisation order.
std::map<std::string, std::map<std::string, model_definition>>& registry() {
  static std::map<std::string, std::map<std::string, model_definition>> models;
  return models;
}

}  // namespace

void register_model(const std::string& suite, model_definition definition) {
  auto& models = registry()[suite];
  const std::string name = definition.name;
  if (!models.emplace(name, std::move(definition)).second)
    throw std::logic_error("model " + name + " is registered twice in suite " + suite);
}

void remove_suite_models(const std::string& suite) { registry().erase(suite); }

std::vector<const model_definition*> suite_models(const std::string& suite) {
  std::vector<const model_definition*> out;
  const auto it = registry().find(suite);
  if (it == registry().end()) return out;
  for (const auto& [name, definition] : it->second) out.push_back(&definition);  // std::map: byte order
  return out;
}

const model_definition* find_model(const std::string& suite, const std::string& name) {
  const auto it = registry().find(suite);
  if (it == registry().end()) return nullptr;
  const auto found = it->second.find(name);
  return found == it->second.end() ? nullptr : &found->second;
}

std::vector<std::string> suite_model_names(const std::string& suite) {
  std::vector<std::string> names;
  for (const auto* definition : suite_models(suite)) names.push_back(definition->name);
  return names;
}

std::vector<std::string> registered_suites() {
  std::vector<std::string> out;
  for (const auto& [suite, models] : registry()) out.push_back(suite);
  return out;
}

}  // namespace benchmatrix
