#include "output/run_context_diff.hpp"

#include "core/text_file.hpp"

#include <map>
#include <stdexcept>

namespace benchmatrix {
namespace {

const char* const absent = "(absent)";

std::string value_text(const json_value& value) {
  if (value.IsString()) return {value.GetString(), value.GetStringLength()};
  if (value.IsArray()) {
    std::string out;
    for (const auto& item : value.GetArray())
      out += (out.empty() ? "" : " ") + value_text(item);
    return out;
  }
  return to_python_json(value);
}

/// Every leaf of `object` as (dotted path, text), in the object's order.
void flatten(const json_value& object, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& member : object.GetObject()) {
    const std::string name(member.name.GetString(), member.name.GetStringLength());
    if (prefix.empty() && (name == "started" || name == "earlier_sweeps")) continue;
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    if (member.value.IsObject() && !member.value.ObjectEmpty()) {
      flatten(member.value, path, out);
    } else {
      out.emplace_back(path, value_text(member.value));
    }
  }
}

}  // namespace

std::vector<context_difference> run_context_differences(const json_value& a,
                                                        const json_value& b) {
  std::vector<std::pair<std::string, std::string>> fields_a, fields_b;
  if (a.IsObject()) flatten(a, "", fields_a);
  if (b.IsObject()) flatten(b, "", fields_b);
  const std::map<std::string, std::string> by_field_a(fields_a.begin(), fields_a.end());
  const std::map<std::string, std::string> by_field_b(fields_b.begin(), fields_b.end());
  std::vector<context_difference> out;
  for (const auto& [field, value] : fields_a) {
    const auto other = by_field_b.find(field);
    const std::string value_b = other == by_field_b.end() ? absent : other->second;
    if (value != value_b) out.push_back({field, value, value_b});
  }
  for (const auto& [field, value] : fields_b)
    if (!by_field_a.count(field)) out.push_back({field, absent, value});
  return out;
}

std::optional<json_document> run_context_of_directory(const std::filesystem::path& run) {
  std::error_code ec;
  const auto path = run / "run_context.json";
  if (!std::filesystem::is_directory(run, ec) || !std::filesystem::is_regular_file(path, ec))
    return std::nullopt;
  json_document context = parse_json(read_text_file(path), path.string());
  if (!context.IsObject())
    throw std::runtime_error(path.string() + ": expected a JSON object (a run context)");
  return context;
}

std::string run_context_diff_text(const std::vector<context_difference>& differences,
                                  bool markdown) {
  if (differences.empty()) return "run context: the same in A and B\n\n";
  std::string out = "run context: A -> B differs in " + std::to_string(differences.size()) +
                    " field(s):\n";
  if (markdown) out += "\n";
  for (const auto& d : differences)
    out += (markdown ? "- `" + d.field + "`" : "  " + d.field) + ": " + d.a + " -> " + d.b + "\n";
  return out + "\n";
}

}  // namespace benchmatrix
