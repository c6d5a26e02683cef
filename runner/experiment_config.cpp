#include "runner/experiment_config.hpp"

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

template <typename T> std::vector<T> unique_in_order(const std::vector<T>& values) {
  std::vector<T> out;
  for (const auto& v : values)
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

/// §2.2 rules 2, 3, 5 and 6 (rule 3 extended to torchscript and cudagraphs): combinations that are meaningless everywhere are dropped.
bool is_valid(const experiment_config& c) {
  if (c.torch_xla2 && c.dynamo) return false;  // torch_xla2 does not support dynamo
  if (c.dynamo == "inductor" && (c.accelerator == "tpu" || c.xla)) return false;
  // benchmatrix's own backends run LibTorch on the device, never through XLA (as inductor).
  if ((c.dynamo == "torchscript" || c.dynamo == "cudagraphs") && (c.accelerator == "tpu" || c.xla))
    return false;
  if (c.dynamo == "openxla" && !c.xla) return false;
  if (c.accelerator == "tpu" && !c.xla) return false;
  if ((c.accelerator == "cpu" || c.accelerator == "cuda") && c.xla == "XRT") return false;
  if (c.keep_model_data_on_cuda && c.dynamo != "openxla") return false;
  return true;
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
  return e;
}

std::string experiment_config::describe() const {
  std::string out = "accelerator=" + accelerator + " xla=" + xla.value_or("None") +
                    " dynamo=" + dynamo.value_or("None") + " test=" + test;
  if (xla_flags) out += " xla_flags=" + *xla_flags;
  if (torch_xla2) out += " torch_xla2=" + *torch_xla2;
  return out;
}

std::vector<experiment_config> expand_experiment_matrix(const runner_options& o) {
  const auto accelerators = o.accelerator.empty() ? std::vector<std::string>{"cpu", "cuda", "tpu"}
                                                  : unique_in_order(o.accelerator);
  const auto xlas = o.xla.empty() ? std::vector<nullable_string>{std::nullopt, "PJRT", "XRT"}
                                  : unique_in_order(o.xla);
  const auto xla_flags = o.xla_flags.empty() ? std::vector<nullable_string>{std::nullopt}
                                             : unique_in_order(o.xla_flags);
  const auto dynamos = o.dynamo.empty()
                           ? std::vector<nullable_string>{std::nullopt, "inductor", "openxla"}
                           : unique_in_order(o.dynamo);
  std::vector<nullable_string> torch_xla2s;
  for (const auto& v : unique_in_order(o.torch_xla2)) torch_xla2s.emplace_back(v);
  if (torch_xla2s.empty()) torch_xla2s.emplace_back(std::nullopt);
  const auto tests =
      o.test.empty() ? std::vector<std::string>{"eval", "train"} : unique_in_order(o.test);

  // Odometer in the original's axis order: accelerator outermost, enable_functionalization fastest.
  std::vector<experiment_config> configs;
  for (const auto& accelerator : accelerators)
    for (const auto& xla : xlas)
      for (const auto& flags : xla_flags)
        for (const auto& dynamo : dynamos)
          for (const auto& torch_xla2 : torch_xla2s)
            for (const auto& test : tests) {
              experiment_config c{accelerator, xla,  flags, dynamo, torch_xla2, test,
                                  o.keep_model_data_on_cuda, o.enable_functionalization};
              if (is_valid(c)) configs.push_back(std::move(c));
            }
  return configs;
}

}  // namespace benchmatrix
