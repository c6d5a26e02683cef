// --collect-dynamo-counters / --dump-dynamo-counters for our backends: counters in the shape of
// torch._dynamo.utils.counters ({category: {name: count}}), with these keys:
//   stats.unique_graphs    graphs the backend traced, compiled or captured (0 for eager)
//   stats.calls_captured   steps that ran through that graph
//   compile.cache_hit, compile.cache_miss, compile.cache_rebuilt   the inductor package cache
//   cudagraph.captures     CUDA graphs captured (cudagraphs; inductor on CUDA)
//   fallbacks.eager        always 0: no backend falls back to eager (a step it cannot run is a
//                          SKIP record instead)
// Which graphs and captures a backend has is its descriptor's counters (backends/backend_registry.hpp).
#pragma once

#include "backends/backend.hpp"
#include "core/python_json.hpp"

namespace benchmatrix {

/// The counters of `steps` steps of `step`; `with_compile` adds the preparation's (graphs,
/// cache, captures), which happen once, before the first repeat. Throws std::logic_error for a
/// config no backend runs.
[[nodiscard]] json_value backend_counters(const experiment_config& experiment,
                                          const backend_step& step, bool on_cuda, long long steps,
                                          bool with_compile, json_allocator& allocator);

}  // namespace benchmatrix
