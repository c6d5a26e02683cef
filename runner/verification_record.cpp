#include "runner/verification_record.hpp"

#include "runner/resume.hpp"

#include <stdexcept>

namespace benchmatrix {
namespace {

json_value& metrics_of(json_document& record) {
  if (!record.IsObject()) throw std::runtime_error("the timing record is not a JSON object");
  if (!record.HasMember("metrics") || !record["metrics"].IsObject())
    throw std::runtime_error("the timing record has no metrics object");
  return record["metrics"];
}

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

void merge_verification(json_document& record, const json_value& result) {
  auto& a = record.GetAllocator();
  if (!result.IsObject() || !result.HasMember("verification_code") ||
      !result["verification_code"].IsString() || !result.HasMember("metrics") ||
      !result["metrics"].IsObject())
    throw std::runtime_error("expected {\"verification_code\": str, \"metrics\": {...}}");
  auto& metrics = metrics_of(record);
  for (const auto& member : result["metrics"].GetObject())
    set_member(metrics, member.name.GetString(), json_value(member.value, a), a);
  set_member(record, "verification_code", json_value(result["verification_code"], a), a);
}

void set_verification(json_document& record, const std::string& code, const std::string& error) {
  auto& a = record.GetAllocator();
  json_value details(rapidjson::kObjectType);
  details.AddMember("error", json_value(error.c_str(), a), a);
  set_member(metrics_of(record), "verification", std::move(details), a);
  set_member(record, "verification_code", json_value(code.c_str(), a), a);
}

bool mark_unverified_if_timing_failed(json_document& record) {
  if (!is_failed_record(record)) return false;
  const auto& error = metrics_of(record)["error"];
  const std::string text = error.IsString() ? error.GetString() : "(metrics.error is not a string)";
  set_verification(record, "VERIFIER_DIDNT_RUN",
                   "the timing child failed: " + first_line_elided(text, 300));
  return true;
}

}  // namespace benchmatrix
