// The backend registry (torch-free): what each backend declares about itself — which experiment
// configs select it, the name reports give it, the --dynamo value it adds, the matrix's validity
// rules for that value, why it cannot run a config (the SKIP reason), the step factory the child
// builds it with and what its counters report. The CLI's --dynamo and --baseline choices, the
// matrix's validity rules, availability (backends/availability.hpp), report names
// (backends/backend_name.hpp), aggregate's backend list and the counters are derived from it.
//
// Adding a backend:
//   1. backends/<name>_descriptor.cpp (torch-free) defines `const backend_descriptor&
//      <name>_descriptor()` returning its descriptor (a function-local static).
//   2. Its step, in LibTorch files of its own, registers the factory that descriptor's
//      step_factory names: a namespace-scope `const backend_step_registration` (backends/
//      backend_steps.hpp).
//   3. One line in CMakeLists.txt: `benchmatrix_backend(<name> DESCRIPTOR <file> STEP <files>)`.
//      It adds the descriptor to benchmatrix_tools, the step to benchmatrix_worker and <name> to
//      the generated list backend_registry.cpp reads (so the torch-free side never depends on a
//      static registration object the linker could drop). The order of those lines is the order
//      reports list the backends in.
#pragma once

#include "core/experiment_config.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

/// The experiment fields that select a backend, matched exactly (nullopt matches only null).
struct backend_identity {
  nullable_string xla;
  nullable_string dynamo;
  nullable_string torch_xla2;
};

/// How a backend whose identity has a dynamo value takes part in --dynamo and the matrix.
struct dynamo_choice_rules {
  int position = 0;  // place among --dynamo's choices after None (the original's come first)
  bool in_default_matrix = false;  // expanded when --dynamo is not given (the original's axis:
                                   // inductor, openxla)
  bool needs_xla = false;  // true: dropped without an xla runtime; false: dropped with one, and on
                           // accelerator=tpu (§2.2 rules 2 and 3)
  bool keeps_model_data_on_cuda = false;  // --keep-model-data-on-cuda applies (§2.2 rule 6)
};

/// Which CUDA graphs a backend captures (the counters' cudagraph.captures).
enum class cuda_graph_captures { never, always, on_cuda };

/// What backend_counters (backends/backend_counters.hpp) reports for the backend.
struct backend_counter_shape {
  bool one_graph = false;  // stats.unique_graphs 1 and every step in stats.calls_captured
  cuda_graph_captures captures = cuda_graph_captures::never;
};

struct backend_descriptor {
  std::string report_name;  // aggregate.py's name: "inductor", "openxla+dynamo", "eager", ...
  std::string title;       // the reports' column title: "Inductor", "XLA+Dynamo", ...
  backend_identity identity;
  std::optional<dynamo_choice_rules> dynamo_choice;  // set when identity.dynamo is a --dynamo value
  /// Why it cannot run `experiment` here (the SKIP record's text), nullopt when it can. Empty: no
  /// reasons of its own (availability's host-wide ones still apply).
  std::function<std::optional<std::string>(const experiment_config&)> unavailable_reason;
  /// The name its step factory registers under (backends/backend_steps.hpp); empty for a backend
  /// that reports name but never runs (its unavailable_reason always answers).
  std::string step_factory;
  backend_counter_shape counters;
  /// Its step compiles artifacts into the compile cache (--cache-dir) that a later child of the
  /// same config loads instead of compiling again (AOTInductor packages, StableHLO exports and
  /// XLA executables): --compile-ahead builds them before the timed sweep
  /// (runner/compile_ahead.hpp).
  bool compiles_into_cache = false;
  /// Its eval step compiles a model's torch.export program where the model has one
  /// (model_instance::exported_program) instead of tracing the model: the child asks imported
  /// models for one (model_build_options::exported_program).
  bool compiles_exported_programs = false;
};

/// Every backend of this build, in the reports' order (CMakeLists.txt's benchmatrix_backend lines).
[[nodiscard]] const std::vector<const backend_descriptor*>& backend_catalog();

/// The backend `experiment`'s xla, dynamo and torch_xla2 select; nullptr when none does.
[[nodiscard]] const backend_descriptor* find_backend(const nullable_string& xla,
                                                     const nullable_string& dynamo,
                                                     const nullable_string& torch_xla2);
[[nodiscard]] const backend_descriptor* find_backend(const experiment_config& experiment);

/// The backend a --dynamo value adds; nullptr for a value no backend declares.
[[nodiscard]] const backend_descriptor* find_dynamo_backend(const std::string& dynamo);

/// --dynamo's choices: "None", then the backends' values in dynamo_choice_rules::position order.
[[nodiscard]] std::vector<std::string> dynamo_choices();

/// The dynamo axis when --dynamo is not given: null (eager), then the in_default_matrix values.
[[nodiscard]] std::vector<nullable_string> default_dynamo_axis();

}  // namespace benchmatrix
