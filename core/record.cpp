#include "core/record.hpp"

namespace benchmatrix {
namespace {
json_value text(const std::string& v, json_allocator& a) {
  return json_value(v.c_str(), static_cast<rapidjson::SizeType>(v.size()), a);
}
}  // namespace

json_value record_identity::model_json(json_allocator& a) const {
  json_value m(rapidjson::kObjectType);
  m.AddMember("suite_name", text(suite_name, a), a);
  m.AddMember("model_name", text(model_name, a), a);
  return m;
}

json_value record_identity::experiment_json(json_allocator& a) const {
  return experiment.to_record_json(accelerator_model, batch_size, a);
}

std::string record_line(const record_identity& identity, json_value& metrics,
                        const std::string& verification_code, json_document& d) {
  auto& a = d.GetAllocator();
  json_value record(rapidjson::kObjectType);
  record.AddMember("model", identity.model_json(a), a);
  record.AddMember("experiment", identity.experiment_json(a), a);
  record.AddMember("repeat", identity.repeat, a);
  record.AddMember("iterations_per_run", identity.iterations_per_run, a);
  record.AddMember("metrics", metrics, a);
  record.AddMember("timestamp", identity.timestamp, a);
  record.AddMember("verification_code", text(verification_code, a), a);
  return to_python_json(record);
}

std::string error_record_line(const record_identity& identity, const std::string& error,
                              const std::string& verification_code) {
  json_document d;
  auto& a = d.GetAllocator();
  json_value metrics(rapidjson::kObjectType);
  metrics.AddMember("error", text(error, a), a);
  return record_line(identity, metrics, verification_code, d);
}

}  // namespace benchmatrix
