#include "backends/backend_counters.hpp"

#include "backends/backend_registry.hpp"

#include <stdexcept>

namespace benchmatrix {

json_value backend_counters(const experiment_config& experiment, const backend_step& step,
                            bool on_cuda, long long steps, bool with_compile, json_allocator& a) {
  const backend_descriptor* backend = find_backend(experiment);
  if (!backend)
    throw std::logic_error("backend_counters: no backend runs " + experiment.describe());
  const bool graph = backend->counters.one_graph;
  const cuda_graph_captures captures = backend->counters.captures;
  const bool captured = captures == cuda_graph_captures::always ||
                        (captures == cuda_graph_captures::on_cuda && on_cuda);
  json_value counters(rapidjson::kObjectType);
  json_value stats(rapidjson::kObjectType);
  if (with_compile) stats.AddMember("unique_graphs", graph ? 1 : 0, a);
  stats.AddMember("calls_captured", static_cast<int64_t>(graph ? steps : 0), a);
  counters.AddMember("stats", stats, a);
  if (with_compile) {
    if (step.compile && step.compile->cache_hit) {
      json_value compile(rapidjson::kObjectType);
      compile.AddMember("cache_hit", *step.compile->cache_hit ? 1 : 0, a);
      compile.AddMember("cache_miss", *step.compile->cache_hit ? 0 : 1, a);
      compile.AddMember("cache_rebuilt", step.compile->cache_note.empty() ? 0 : 1, a);
      counters.AddMember("compile", compile, a);
    }
    json_value cudagraph(rapidjson::kObjectType);
    cudagraph.AddMember("captures", captured ? 1 : 0, a);
    counters.AddMember("cudagraph", cudagraph, a);
  }
  json_value fallbacks(rapidjson::kObjectType);
  fallbacks.AddMember("eager", 0, a);
  counters.AddMember("fallbacks", fallbacks, a);
  return counters;
}

}  // namespace benchmatrix
