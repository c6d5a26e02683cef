#include "backends/backend_counters.hpp"

namespace benchmatrix {

json_value backend_counters(const experiment_config& experiment, const backend_step& step,
                            bool on_cuda, long long steps, bool with_compile, json_allocator& a) {
  const std::string dynamo = experiment.dynamo.value_or("");
  const bool graph = !dynamo.empty();  // torchscript, cudagraphs, inductor: one graph each
  const bool captured = dynamo == "cudagraphs" || (dynamo == "inductor" && on_cuda);
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
