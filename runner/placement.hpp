// Where a config ran in a --devices sweep, recorded because concurrency is a measurement hazard:
// the record's top-level "placement" object (after verification_code; readers ignore unknown keys,
// and unlike a dict under "metrics" it cannot trip the original result_analyzer.py):
//   {"host": "node7", "device": "1", "children_beside": 1, "wall_time_s": 12.5}
#pragma once

#include "core/python_json.hpp"

#include <string>

namespace benchmatrix {

struct child_placement {
  std::string host;            // gethostname()
  std::string device;          // the --devices entry the child was pinned to (CUDA_VISIBLE_DEVICES)
  size_t children_beside = 0;  // most other children running on the host during its timing child
  double wall_time_s = 0;      // the timing child's wall time, seconds (what --expected-times reads)
};

/// The record line with "placement" set (replaced if present).
[[nodiscard]] std::string with_placement(const std::string& record_line,
                                         const child_placement& placement);

/// This host's name, or "unknown".
[[nodiscard]] std::string host_name();

}  // namespace benchmatrix
