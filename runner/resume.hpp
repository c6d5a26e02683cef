// Resume (shared/reference/xla_runner.md §3.2): a config is done when a record with the same
// fingerprint is in the results file — byte-compatible with files the Python runner wrote.
#pragma once

#include "core/python_json.hpp"
#include "core/record.hpp"

#include <optional>
#include <set>
#include <string>

namespace benchmatrix {

/// "-".join(str(v) for v in model.values(), str(v) for (k, v) in experiment.items() if k !=
/// "batch_size", str(current --batch-size)).
[[nodiscard]] std::string fingerprint(const json_value& model, const json_value& experiment,
                                      std::optional<long long> current_batch_size);

/// fingerprint() without experiment.accelerator_model: the same config wherever it ran (on any
/// host of a Slurm array, on any GPU of --devices). How a --slurm sweep matches records to its plan.
[[nodiscard]] std::string placement_free_fingerprint(const json_value& model,
                                                     const json_value& experiment,
                                                     std::optional<long long> current_batch_size);

/// fingerprint() of a typed record: its model and experiment objects as the record writer writes
/// them, so equal to the fingerprint of its line.
[[nodiscard]] std::string fingerprint(const record_identity& record,
                                      std::optional<long long> current_batch_size);

/// placement_free_fingerprint() of a typed record. How --slurm and --expected-times key earlier
/// records.
[[nodiscard]] std::string placement_free_fingerprint(const record_identity& record,
                                                     std::optional<long long> current_batch_size);

/// True for records a --retry-failed rerun runs again: metrics.error that is not a SKIP.
[[nodiscard]] bool is_failed_record(const json_value& record);

}  // namespace benchmatrix
