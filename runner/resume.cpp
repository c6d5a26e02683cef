#include "runner/resume.hpp"

#include "core/results_record.hpp"

#include <stdexcept>

namespace benchmatrix {

namespace {

std::string fingerprint_without(const json_value& model, const json_value& experiment,
                                std::optional<long long> current_batch_size,
                                std::string_view also_skipped) {
  if (!model.IsObject() || !experiment.IsObject())
    throw std::runtime_error("record lacks a 'model' or 'experiment' object");
  std::string out;
  auto add = [&out](const std::string& piece) { out += (out.empty() ? "" : "-") + piece; };
  for (const auto& m : model.GetObject()) add(python_str(m.value));
  for (const auto& m : experiment.GetObject())
    if (const std::string_view key(m.name.GetString(), m.name.GetStringLength());
        key != "batch_size" && key != also_skipped)
      add(python_str(m.value));
  add(current_batch_size ? std::to_string(*current_batch_size) : "None");
  return out;
}

}  // namespace

std::string fingerprint(const json_value& model, const json_value& experiment,
                        std::optional<long long> current_batch_size) {
  return fingerprint_without(model, experiment, current_batch_size, "batch_size");
}

std::string placement_free_fingerprint(const json_value& model, const json_value& experiment,
                                       std::optional<long long> current_batch_size) {
  return fingerprint_without(model, experiment, current_batch_size, "accelerator_model");
}

std::string fingerprint(const record_identity& record, std::optional<long long> current_batch_size) {
  json_document d;
  auto& a = d.GetAllocator();
  return fingerprint(record.model_json(a), record.experiment_json(a), current_batch_size);
}

std::string placement_free_fingerprint(const record_identity& record,
                                       std::optional<long long> current_batch_size) {
  json_document d;
  auto& a = d.GetAllocator();
  return placement_free_fingerprint(record.model_json(a), record.experiment_json(a),
                                    current_batch_size);
}

namespace {

/// A SKIP record (metrics.error starts with "SKIP"): nothing ran.
bool is_skip_record(const json_value& record) {
  const auto metrics = record.FindMember("metrics");
  if (metrics == record.MemberEnd() || !metrics->value.IsObject()) return false;
  const auto error = metrics->value.FindMember("error");
  return error != metrics->value.MemberEnd() && error->value.IsString() &&
         is_skip_error({error->value.GetString(), error->value.GetStringLength()});
}

}  // namespace

bool is_failed_record(const json_value& record) {
  const auto metrics = record.FindMember("metrics");
  if (metrics == record.MemberEnd() || !metrics->value.IsObject()) return false;
  return metrics->value.HasMember("error") && !is_skip_record(record);
}

}  // namespace benchmatrix
