#include "runner/rerun_selection.hpp"

#include "backends/backend_name.hpp"
#include "core/argparse.hpp"

namespace benchmatrix {
namespace {

std::string backend_of(const planned_config& config) {
  const auto& e = config.experiment;
  return display_config_backend(e);
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

rerun_selector parse_rerun_selector(const std::string& text) {
  const std::string expected = "expected MODEL[:BACKEND[:TEST]], e.g. resnet18:inductor:eval";
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string::npos ? colon : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() > 3 || parts[0].empty())
    throw usage_error("argument --rerun: invalid selector '" + text + "' (" + expected + ")");
  rerun_selector selector;
  selector.text = text;
  selector.model = parts[0];
  const auto part = [&](size_t i) -> std::optional<std::string> {
    if (i >= parts.size() || parts[i].empty() || parts[i] == "*") return std::nullopt;
    return parts[i];
  };
  selector.backend = part(1);
  selector.test = part(2);
  if (selector.test && *selector.test != "eval" && *selector.test != "train")
    throw usage_error("argument --rerun: invalid TEST '" + *selector.test + "' in '" + text +
                      "' (expected eval or train)");
  return selector;
}

bool selects(const rerun_selector& selector, const planned_config& config) {
  return config.model == selector.model &&
         (!selector.backend || *selector.backend == backend_of(config)) &&
         (!selector.test || *selector.test == config.experiment.test);
}

std::set<std::string> rerun_keys(const std::vector<rerun_selector>& selectors,
                                 const std::vector<planned_config>& configs,
                                 const runner_options& options) {
  std::set<std::string> keys;
  for (const auto& selector : selectors) {
    bool any = false;
    for (const auto& config : configs)
      if (selects(selector, config)) {
        keys.insert(placement_free_key(config, options));
        any = true;
      }
    if (any) continue;
    std::set<std::string> models, backends, tests;
    for (const auto& config : configs) {
      models.insert(config.model);
      backends.insert(backend_of(config));
      tests.insert(config.experiment.test);
    }
    throw usage_error("argument --rerun: '" + selector.text +
                      "' names no config of this sweep's matrix (models: " + joined(models) +
                      "; backends: " + joined(backends) + "; tests: " + joined(tests) +
                      "); give the night's own flags plus --rerun");
  }
  return keys;
}

}  // namespace benchmatrix
