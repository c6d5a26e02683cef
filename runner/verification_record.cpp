#include "runner/verification_record.hpp"

#include <stdexcept>

namespace benchmatrix {
namespace {

void set_member(json_value& object, const char* key, json_value value, json_allocator& a) {
  if (auto it = object.FindMember(key); it != object.MemberEnd()) {
    it->value = value;
  } else {
    object.AddMember(json_value(key, a), value, a);
  }
}

/// `text`'s first line; past `limit` characters, its middle replaced by " ... " (a timeout's
/// message is one long line whose end, "timed out after N seconds", matters).
std::string first_line_elided(const std::string& text, size_t limit) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() <= limit) return line;
  const size_t half = (limit - 5) / 2;
  return line.substr(0, half) + " ... " + line.substr(line.size() - half);
}

}  // namespace

void merge_verification(results_record& record, const json_value& result) {
  if (!result.IsObject() || !result.HasMember("verification_code") ||
      !result["verification_code"].IsString() || !result.HasMember("verification") ||
      !result["verification"].IsObject())
    throw std::runtime_error("expected {\"verification_code\": str, \"verification\": {...}}");
  auto& a = record.extras.GetAllocator();
  set_member(record.extras, "verification", json_value(result["verification"], a), a);
  record.verification_code = result["verification_code"].GetString();
}

void set_verification(results_record& record, const std::string& code, const std::string& error) {
  auto& a = record.extras.GetAllocator();
  json_value details(rapidjson::kObjectType);
  details.AddMember("error", json_value(error.c_str(), a), a);
  set_member(record.extras, "verification", std::move(details), a);
  record.verification_code = code;
}

bool mark_unverified_if_timing_failed(results_record& record) {
  if (!record.is_failed()) return false;
  const auto error = record.error();  // a non-string error comes back as its JSON
  set_verification(record, "VERIFIER_DIDNT_RUN",
                   "the timing child failed: " + first_line_elided(error.value_or(""), 300));
  return true;
}

}  // namespace benchmatrix
