#include "runner/model_selection.hpp"

#include <regex>

namespace benchmatrix {
namespace {

std::regex compile_alternation(const std::vector<std::string>& patterns, const char* flag) {
  std::string joined;
  for (const auto& p : patterns) joined += (joined.empty() ? "" : "|") + p;
  try {
    return std::regex(joined, std::regex::ECMAScript | std::regex::icase);
  } catch (const std::regex_error& e) {
    throw usage_error(std::string("argument ") + flag + ": invalid regular expression '" +
                      joined + "': " + e.what());
  }
}

}  // namespace

std::vector<std::string> models_in_partition(const std::vector<std::string>& all_models,
                                             const runner_options& o) {
  const auto filter = compile_alternation(o.filter, "--filter/-k");
  const auto exclude = compile_alternation(o.exclude, "--exclude/-x");
  const size_t chunk = all_models.size() / static_cast<size_t>(o.total_partitions);
  const size_t begin = chunk * static_cast<size_t>(o.partition_id);
  const size_t end = o.partition_id == o.total_partitions - 1 ? all_models.size() : begin + chunk;
  std::vector<std::string> selected;
  for (size_t i = begin; i < end; ++i) {
    const auto& name = all_models[i];
    if (std::regex_search(name, filter) && !std::regex_search(name, exclude))
      selected.push_back(name);
  }
  return selected;
}

std::vector<std::string> select_models(const std::vector<std::string>& all_models,
                                       const runner_options& o) {
  auto selected = models_in_partition(all_models, o);
  if (selected.empty()) {
    std::string available;
    for (const auto& name : all_models) available += (available.empty() ? "" : ", ") + name;
    std::string filters;
    for (const auto& f : o.filter) filters += " -k " + f;
    for (const auto& x : o.exclude) filters += " -x " + x;
    throw usage_error("no model of suite '" + o.suite_name + "' matches" + filters +
                      " in partition " + std::to_string(o.partition_id) + "/" +
                      std::to_string(o.total_partitions) + " (models: " + available + ")");
  }
  return selected;
}

}  // namespace benchmatrix
