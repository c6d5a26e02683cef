// A results.jsonl record (shared/reference/xla_runner.md §5.2): the same top-level shape for every
// writer — the child's timing record and the parent's SKIP and error records.
#pragma once

#include "core/experiment_config.hpp"
#include "core/python_json.hpp"

#include <optional>
#include <string>

namespace benchmatrix {

/// Everything of a record but its metrics and verification code.
struct record_identity {
  std::string suite_name;
  std::string model_name;
  experiment_config experiment;
  std::string accelerator_model;
  std::optional<long long> batch_size;  // actual (timing records) or --batch-size (parent records)
  int repeat = 10;
  int iterations_per_run = 1;
  double timestamp = 0;

  /// {"suite_name": ..., "model_name": ...}
  [[nodiscard]] json_value model_json(json_allocator& allocator) const;
  /// The record's experiment object (with accelerator_model and batch_size).
  [[nodiscard]] json_value experiment_json(json_allocator& allocator) const;
};

/// The one writer of a results line: model, experiment, repeat, iterations_per_run, metrics,
/// timestamp, verification_code, then the members of `extras` (an object, e.g. {"placement": ...};
/// nullptr: none), in Python's json.dump format. results_record::to_line() writes through it.
[[nodiscard]] std::string record_line(const record_identity& identity, const json_value& metrics,
                                      const std::string& verification_code,
                                      const json_value* extras = nullptr);

/// record_line() for a child that built its metrics in `document` (kept for its callers).
[[nodiscard]] std::string record_line(const record_identity& identity, json_value& metrics,
                                      const std::string& verification_code,
                                      json_document& document);

/// A record whose metrics are {"error": text}, as the parent writes for SKIP and failed children.
[[nodiscard]] std::string error_record_line(const record_identity& identity,
                                            const std::string& error,
                                            const std::string& verification_code);

}  // namespace benchmatrix
