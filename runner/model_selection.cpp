#include "runner/model_selection.hpp"

#include <regex>

namespace benchmatrix {
namespace {

/// The suite whose one model runs whatever the filters and partitions say.
constexpr const char* dummy_suite = "dummy";

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

std::vector<selected_model> models_in_partition(const std::vector<suite_models>& suites,
                                                const runner_options& o) {
  const auto filter = compile_alternation(o.filter, "--filter/-k");
  const auto exclude = compile_alternation(o.exclude, "--exclude/-x");
  size_t partitioned = 0;  // models of the suites that are partitioned (all but dummy)
  for (const auto& s : suites)
    if (s.suite != dummy_suite) partitioned += s.models.size();
  const size_t chunk = partitioned / static_cast<size_t>(o.total_partitions);
  const size_t begin = chunk * static_cast<size_t>(o.partition_id);
  const bool last_partition = o.partition_id == o.total_partitions - 1;
  const size_t end = last_partition ? partitioned : begin + chunk;
  std::vector<selected_model> selected;
  size_t position = 0;  // of the model in the partitioned list
  for (const auto& s : suites) {
    if (s.suite == dummy_suite) {
      // A --slurm sweep plans every partition at once: the model must be in exactly one.
      if (!o.slurm || last_partition)
        for (const auto& name : s.models) selected.push_back({s.suite, name});
      continue;
    }
    for (const auto& name : s.models) {
      const size_t i = position++;
      if (i >= begin && i < end && std::regex_search(name, filter) &&
          !std::regex_search(name, exclude))
        selected.push_back({s.suite, name});
    }
  }
  return selected;
}

std::vector<selected_model> select_models(const std::vector<suite_models>& suites,
                                          const runner_options& o) {
  auto selected = models_in_partition(suites, o);
  if (selected.empty()) {
    std::string names, available;
    for (const auto& s : suites) {
      names += (names.empty() ? "'" : ", '") + s.suite + "'";
      std::string models;
      for (const auto& name : s.models) models += (models.empty() ? "" : ", ") + name;
      available += (available.empty() ? "" : "; ") +
                   (suites.size() > 1 ? s.suite + ": " : std::string()) + models;
    }
    std::string filters;
    for (const auto& f : o.filter) filters += " -k " + f;
    for (const auto& x : o.exclude) filters += " -x " + x;
    throw usage_error("no model of suite" + std::string(suites.size() > 1 ? "s " : " ") + names +
                      " matches" + filters + " in partition " + std::to_string(o.partition_id) +
                      "/" + std::to_string(o.total_partitions) + " (models: " + available + ")");
  }
  return selected;
}

}  // namespace benchmatrix
