#include "core/experiment_config.hpp"

#include <algorithm>
#include <stdexcept>

namespace benchmatrix {
namespace {

json_value nullable(const nullable_string& v, json_allocator& allocator) {
  if (!v) return json_value(rapidjson::kNullType);
  return json_value(v->c_str(), static_cast<rapidjson::SizeType>(v->size()), allocator);
}

json_value text(const std::string& v, json_allocator& allocator) {
  return json_value(v.c_str(), static_cast<rapidjson::SizeType>(v.size()), allocator);
}

void add(json_value& object, const char* key, json_value value, json_allocator& allocator) {
  object.AddMember(json_value(key, allocator), value, allocator);
}

const json_value& member(const json_value& object, const char* key) {
  const auto it = object.FindMember(key);
  if (it == object.MemberEnd())
    throw std::runtime_error(std::string("--experiment-config: missing key '") + key + "'");
  return it->value;
}

nullable_string read_nullable(const json_value& object, const char* key) {
  const auto& v = member(object, key);
  if (v.IsNull()) return std::nullopt;
  if (!v.IsString())
    throw std::runtime_error(std::string("--experiment-config: '") + key +
                             "' must be a string or null");
  return std::string(v.GetString(), v.GetStringLength());
}

bool read_bool(const json_value& object, const char* key, bool fallback) {
  const auto it = object.FindMember(key);
  if (it == object.MemberEnd()) return fallback;
  if (!it->value.IsBool())
    throw std::runtime_error(std::string("--experiment-config: '") + key + "' must be a boolean");
  return it->value.GetBool();
}

/// `object`.`key` when present: one of the axis' names (a string), else `fallback`.
std::string read_axis_name(const json_value& object, const char* key, std::string_view fallback) {
  const auto it = object.FindMember(key);
  if (it == object.MemberEnd()) return std::string(fallback);
  if (!it->value.IsString() || !is_axis_name(key, {it->value.GetString(), it->value.GetStringLength()}))
    throw std::runtime_error(std::string("--experiment-config: '") + key + "' must be one of " +
                             axis_name_list(key) + ", got " + to_python_json(it->value));
  return {it->value.GetString(), it->value.GetStringLength()};
}

/// precision and inductor_mode, each where not at its default (see experiment_config).
void add_benchmatrix_axes(const experiment_config& c, json_value& object, json_allocator& a) {
  if (c.precision != default_precision) add(object, "precision", text(c.precision, a), a);
  if (c.inductor_mode != default_inductor_mode)
    add(object, "inductor_mode", text(c.inductor_mode, a), a);
}

}  // namespace

std::string experiment_config::to_config_json() const {
  json_document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  add(d, "accelerator", text(accelerator, a), a);
  add(d, "xla", nullable(xla, a), a);
  add(d, "xla_flags", nullable(xla_flags, a), a);
  add(d, "dynamo", nullable(dynamo, a), a);
  add(d, "torch_xla2", nullable(torch_xla2, a), a);
  add(d, "test", text(test, a), a);
  add(d, "keep_model_data_on_cuda", json_value(keep_model_data_on_cuda), a);
  add(d, "enable_functionalization", json_value(enable_functionalization), a);
  add_benchmatrix_axes(*this, d, a);
  return to_python_json(d);
}

experiment_config experiment_config::from_config_json(const std::string& text_json) {
  const auto d = parse_json(text_json, "--experiment-config");
  if (!d.IsObject()) throw std::runtime_error("--experiment-config: expected a JSON object");
  experiment_config c;
  const auto accelerator = read_nullable(d, "accelerator");
  if (!accelerator) throw std::runtime_error("--experiment-config: 'accelerator' must be a string");
  c.accelerator = *accelerator;
  std::transform(c.accelerator.begin(), c.accelerator.end(), c.accelerator.begin(),
                 [](unsigned char ch) { return std::tolower(ch); });
  c.xla = read_nullable(d, "xla");
  c.xla_flags = read_nullable(d, "xla_flags");
  c.dynamo = read_nullable(d, "dynamo");
  c.torch_xla2 = read_nullable(d, "torch_xla2");
  const auto test = read_nullable(d, "test");
  if (!test || (*test != "eval" && *test != "train"))
    throw std::runtime_error("--experiment-config: 'test' must be \"eval\" or \"train\"");
  c.test = *test;
  c.keep_model_data_on_cuda = read_bool(d, "keep_model_data_on_cuda", false);
  c.enable_functionalization = read_bool(d, "enable_functionalization", false);
  c.precision = read_axis_name(d, "precision", default_precision);
  c.inductor_mode = read_axis_name(d, "inductor_mode", default_inductor_mode);
  return c;
}

json_value experiment_config::to_record_json(const std::string& accelerator_model,
                                             std::optional<long long> batch_size,
                                             json_allocator& a) const {
  json_value e(rapidjson::kObjectType);
  add(e, "accelerator", text(accelerator, a), a);
  add(e, "accelerator_model", text(accelerator_model, a), a);
  add(e, "xla", nullable(xla, a), a);
  add(e, "xla_flags", nullable(xla_flags, a), a);
  add(e, "dynamo", nullable(dynamo, a), a);
  add(e, "torch_xla2", nullable(torch_xla2, a), a);
  add(e, "keep_model_data_on_cuda", json_value(keep_model_data_on_cuda), a);
  add(e, "test", text(test, a), a);
  add(e, "batch_size",
      batch_size ? json_value(static_cast<int64_t>(*batch_size)) : json_value(rapidjson::kNullType),
      a);
  add(e, "enable_functionalization", json_value(enable_functionalization), a);
  add_benchmatrix_axes(*this, e, a);
  return e;
}

std::string experiment_config::describe() const {
  std::string out = "accelerator=" + accelerator + " xla=" + xla.value_or("None") +
                    " dynamo=" + dynamo.value_or("None") + " test=" + test;
  if (xla_flags) out += " xla_flags=" + *xla_flags;
  if (torch_xla2) out += " torch_xla2=" + *torch_xla2;
  if (precision != default_precision) out += " precision=" + precision;
  if (inductor_mode != default_inductor_mode) out += " inductor_mode=" + inductor_mode;
  return out;
}

}  // namespace benchmatrix
