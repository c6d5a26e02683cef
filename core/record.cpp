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

std::string record_line(const record_identity& identity, const json_value& metrics,
                        const std::string& verification_code, const json_value* extras) {
  // Member by member, the bytes to_python_json gives for the whole object: "{" key ": " value,
  // members joined by ", " — so extras need no copy into one document.
  json_document d;
  auto& a = d.GetAllocator();
  std::string out = "{\"model\": " + to_python_json(identity.model_json(a));
  out += ", \"experiment\": " + to_python_json(identity.experiment_json(a));
  out += ", \"repeat\": " + std::to_string(identity.repeat);
  out += ", \"iterations_per_run\": " + std::to_string(identity.iterations_per_run);
  out += ", \"metrics\": " + to_python_json(metrics);
  out += ", \"timestamp\": " + python_float_repr(identity.timestamp);
  out += ", \"verification_code\": " + to_python_json(text(verification_code, a));
  if (extras)
    for (const auto& m : extras->GetObject())
      out += ", " + to_python_json(m.name) + ": " + to_python_json(m.value);
  return out + "}";
}

std::string record_line(const record_identity& identity, json_value& metrics,
                        const std::string& verification_code, json_document&) {
  return record_line(identity, static_cast<const json_value&>(metrics), verification_code);
}

std::string error_record_line(const record_identity& identity, const std::string& error,
                              const std::string& verification_code) {
  json_document d;
  auto& a = d.GetAllocator();
  json_value metrics(rapidjson::kObjectType);
  metrics.AddMember("error", text(error, a), a);
  return record_line(identity, static_cast<const json_value&>(metrics), verification_code);
}

}  // namespace benchmatrix
