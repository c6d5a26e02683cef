// IR dumps, our backends' counterparts of the original's XLA dumps (xla_runner.md §8.2), under the
// same names:
//   --save-ir-format text  <out>/<model>/dump-<basename>.text: the traced TorchScript graph
//                          (torchscript: also the frozen, optimised graph that runs; openxla:
//                          the StableHLO module)
//   --save-ir-format stablehlo  <out>/<model>/dump-<basename>.stablehlo (openxla only)
//   --save-ir-format hlo   <out>/<model>/dump-<basename>.hlo (openxla only): the HLO module XLA
//                          was given, before its passes, copied from XLA's own dump (the parent
//                          points XLA_FLAGS' --xla_dump_to at <out>/<model>/hlo-<basename>/)
//   --dump-hlo             <out>/<model>/hlo-<basename>/: the AOTInductor-generated sources
//                          (wrapper and kernel .cpp, metadata .json) from the inductor package;
//                          openxla: XLA's own dumps (HLO before/after optimisation, ...), written
//                          by the PJRT plugin under --xla_dump_to, which the parent adds to XLA_FLAGS
// A backend without such an IR (eager and cudagraphs run the model's own C++ code) gets a note in
// the record's top-level "ir_note" instead of a file.
#pragma once

#include "backends/backend.hpp"
#include "core/python_json.hpp"

#include <filesystem>
#include <string>

namespace benchmatrix {

struct ir_dump_request {
  std::string save_format;  // --save-ir-format: "", "text", "stablehlo" or "hlo"
  bool dump_sources = false;  // --dump-hlo
  std::filesystem::path output_dir;
  experiment_config experiment;
  std::string model_name;
  std::string backend;  // display name, for notes
};

/// Writes the requested dumps of `step`; what it cannot write goes to record.ir_note (the record's
/// top-level keys). Throws std::runtime_error when a file cannot be written.
void write_ir_dumps(const backend_step& step, const ir_dump_request& request, json_value& record,
                    json_allocator& allocator);

}  // namespace benchmatrix
