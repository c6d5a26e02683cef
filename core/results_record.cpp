#include "core/results_record.hpp"

#include "core/results_file.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// Reads one record, naming where it is and which key did not fit.
class record_reader {
public:
  explicit record_reader(std::string where) : m_where(std::move(where)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& expected) const {
    throw std::runtime_error(m_where + ": '" + key + "': expected " + expected);
  }

  /// The members of `object` must start with `keys`, in this order.
  void expect_keys(const json_value& object, const std::string& prefix,
                   std::initializer_list<const char*> keys) const {
    auto it = object.MemberBegin();
    for (const char* key : keys) {
      if (it == object.MemberEnd())
        fail(prefix + key, "the key here (the record ends before it)");
      if (std::string_view(it->name.GetString(), it->name.GetStringLength()) != key)
        fail(prefix + key, "the key here, found '" +
                               std::string(it->name.GetString(), it->name.GetStringLength()) + "'");
      ++it;
    }
  }

  std::string text(const json_value& v, const std::string& key) const {
    if (!v.IsString()) fail(key, "a string, found " + to_python_json(v));
    return {v.GetString(), v.GetStringLength()};
  }
  nullable_string nullable(const json_value& v, const std::string& key) const {
    if (v.IsNull()) return std::nullopt;
    if (!v.IsString()) fail(key, "a string or null, found " + to_python_json(v));
    return std::string(v.GetString(), v.GetStringLength());
  }
  bool boolean(const json_value& v, const std::string& key) const {
    if (!v.IsBool()) fail(key, "true or false, found " + to_python_json(v));
    return v.GetBool();
  }
  int integer(const json_value& v, const std::string& key) const {
    if (!v.IsInt()) fail(key, "an integer, found " + to_python_json(v));
    return v.GetInt();
  }
  std::optional<long long> nullable_integer(const json_value& v, const std::string& key) const {
    if (v.IsNull()) return std::nullopt;
    if (!v.IsInt64()) fail(key, "an integer or null, found " + to_python_json(v));
    return v.GetInt64();
  }
  double floating(const json_value& v, const std::string& key) const {
    // An integral timestamp would come back as "1.0": only floats keep a round trip lossless.
    if (!v.IsDouble()) fail(key, "a float, found " + to_python_json(v));
    return v.GetDouble();
  }
  void object(const json_value& v, const std::string& key) const {
    if (!v.IsObject()) fail(key, "an object, found " + to_python_json(v));
  }
  /// An integer, or a float with an integral value (older writers' 8.0).
  long long integral(const json_value& v, const std::string& key) const {
    if (v.IsInt64()) return v.GetInt64();
    if (v.IsDouble() && std::isfinite(v.GetDouble()) && v.GetDouble() == std::floor(v.GetDouble()))
      return static_cast<long long>(v.GetDouble());
    fail(key, "an integer, found " + to_python_json(v));
  }
  double number(const json_value& v, const std::string& key) const {
    if (!v.IsNumber()) fail(key, "a number, found " + to_python_json(v));
    return v.GetDouble();
  }

  /// experiment.`key` ("precision" or "inductor_mode"): one of its axis' names.
  std::string axis_name(const json_value& v, const char* key) const {
    const std::string name = std::string("experiment.") + key;
    std::string value = text(v, name);
    if (!is_axis_name(key, value)) fail(name, "one of " + axis_name_list(key) + ", found '" + value + "'");
    return value;
  }

  /// A top-level "noise" must be what noise() reads.
  void check_noise(const json_value& extras) const {
    const auto it = extras.FindMember("noise");
    if (it == extras.MemberEnd()) return;
    try {
      (void)parse_noise_verdict(it->value, "noise");
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(m_where + ": " + e.what());
    }
  }

private:
  std::string m_where;
};

/// A "paired" key that is there has the shape results_record::paired() reads (throws naming it).
void check_paired(const results_record& r, const std::string& where) {
  if (const json_value* paired = r.extra("paired")) (void)paired_speedups_from_json(*paired, where);
}

/// After the original's ten experiment keys, benchmatrix's optional axes (core/precision_axes.hpp),
/// in this order and each only where not at its default: "precision", "inductor_mode".
void read_benchmatrix_axes(const record_reader& in, const json_value& e, experiment_config& c) {
  auto it = e.MemberBegin() + 10;
  const auto axis = [&](const char* key, std::string& value) {
    if (it == e.MemberEnd() || std::string_view(it->name.GetString()) != key) return;
    value = in.axis_name(it->value, key);
    ++it;
  };
  axis("precision", c.precision);
  axis("inductor_mode", c.inductor_mode);
  if (it != e.MemberEnd())
    in.fail("experiment", "its ten keys, then \"precision\" and \"inductor_mode\" where not at "
                          "their defaults, and no others; found '" +
                              std::string(it->name.GetString(), it->name.GetStringLength()) + "'");
}

}  // namespace

results_record::results_record() {
  metrics.SetObject();
  extras.SetObject();
}

results_record results_record::parse(std::string_view line, const std::string& where) {
  const record_reader in(where);
  json_document d = parse_json(line, where);
  if (!d.IsObject()) in.fail("(record)", "a JSON object");
  in.expect_keys(d, "", {"model", "experiment", "repeat", "iterations_per_run", "metrics",
                         "timestamp", "verification_code"});
  results_record r;
  auto& id = r.identity;
  const json_value& model = d["model"];
  in.object(model, "model");
  in.expect_keys(model, "model.", {"suite_name", "model_name"});
  id.suite_name = in.text(model["suite_name"], "model.suite_name");
  id.model_name = in.text(model["model_name"], "model.model_name");

  const json_value& e = d["experiment"];
  in.object(e, "experiment");
  in.expect_keys(e, "experiment.",
                 {"accelerator", "accelerator_model", "xla", "xla_flags", "dynamo", "torch_xla2",
                  "keep_model_data_on_cuda", "test", "batch_size", "enable_functionalization"});
  read_benchmatrix_axes(in, e, id.experiment);
  id.experiment.accelerator = in.text(e["accelerator"], "experiment.accelerator");
  id.accelerator_model = in.text(e["accelerator_model"], "experiment.accelerator_model");
  id.experiment.xla = in.nullable(e["xla"], "experiment.xla");
  id.experiment.xla_flags = in.nullable(e["xla_flags"], "experiment.xla_flags");
  id.experiment.dynamo = in.nullable(e["dynamo"], "experiment.dynamo");
  id.experiment.torch_xla2 = in.nullable(e["torch_xla2"], "experiment.torch_xla2");
  id.experiment.keep_model_data_on_cuda =
      in.boolean(e["keep_model_data_on_cuda"], "experiment.keep_model_data_on_cuda");
  id.experiment.test = in.text(e["test"], "experiment.test");
  id.batch_size = in.nullable_integer(e["batch_size"], "experiment.batch_size");
  id.experiment.enable_functionalization =
      in.boolean(e["enable_functionalization"], "experiment.enable_functionalization");

  id.repeat = in.integer(d["repeat"], "repeat");
  id.iterations_per_run = in.integer(d["iterations_per_run"], "iterations_per_run");
  in.object(d["metrics"], "metrics");
  r.metrics.CopyFrom(d["metrics"], r.metrics.GetAllocator());
  id.timestamp = in.floating(d["timestamp"], "timestamp");
  r.verification_code = in.text(d["verification_code"], "verification_code");
  auto it = d.MemberBegin() + 7;
  for (; it != d.MemberEnd(); ++it)
    r.extras.AddMember(json_value(it->name, r.extras.GetAllocator()),
                       json_value(it->value, r.extras.GetAllocator()), r.extras.GetAllocator());
  in.check_noise(r.extras);
  check_paired(r, where);
  return r;
}

namespace {

/// Reads a record's keys by name, in any order, noting the ones it lacks (parse_lenient).
class lenient_fields {
public:
  lenient_fields(const record_reader& in, std::vector<std::string>& absent)
      : m_in(in), m_absent(absent) {}

  /// `object`.`key` (`name` is its dotted name); nullptr, noted absent, when missing or (unless
  /// `null_is_value`) null.
  const json_value* find(const json_value& object, const char* key, const std::string& name,
                         bool null_is_value = false) const {
    const auto it = object.FindMember(key);
    if (it == object.MemberEnd() || (!null_is_value && it->value.IsNull())) {
      m_absent.push_back(name);
      return nullptr;
    }
    return &it->value;
  }
  std::string text(const json_value& object, const char* key, const std::string& name) const {
    const json_value* v = find(object, key, name);
    return v ? m_in.text(*v, name) : std::string();
  }
  nullable_string nullable(const json_value& object, const char* key,
                           const std::string& name) const {
    const json_value* v = find(object, key, name, true);
    return v ? m_in.nullable(*v, name) : std::nullopt;
  }
  bool boolean(const json_value& object, const char* key, const std::string& name) const {
    const json_value* v = find(object, key, name);
    return v && m_in.boolean(*v, name);
  }

private:
  const record_reader& m_in;
  std::vector<std::string>& m_absent;
};

}  // namespace

results_record results_record::parse_lenient(std::string_view line, const std::string& where) {
  const record_reader in(where);
  json_document d = parse_json(line, where);
  if (!d.IsObject()) in.fail("(record)", "a JSON object");
  results_record r;
  const lenient_fields field(in, r.absent);
  auto& id = r.identity;

  const auto model = d.FindMember("model");
  if (model == d.MemberEnd()) in.fail("model", "an object (the record has none)");
  in.object(model->value, "model");
  const auto model_name = model->value.FindMember("model_name");
  if (model_name == model->value.MemberEnd())
    in.fail("model.model_name", "a string (the record has none)");
  id.model_name = in.text(model_name->value, "model.model_name");
  id.suite_name = field.text(model->value, "suite_name", "model.suite_name");

  const auto experiment = d.FindMember("experiment");
  if (experiment == d.MemberEnd()) in.fail("experiment", "an object (the record has none)");
  const json_value& e = experiment->value;
  in.object(e, "experiment");
  const auto test = e.FindMember("test");
  if (test == e.MemberEnd()) in.fail("experiment.test", "a string (the record has none)");
  id.experiment.test = in.text(test->value, "experiment.test");
  id.experiment.accelerator = field.text(e, "accelerator", "experiment.accelerator");
  id.accelerator_model = field.text(e, "accelerator_model", "experiment.accelerator_model");
  id.experiment.xla = field.nullable(e, "xla", "experiment.xla");
  id.experiment.xla_flags = field.nullable(e, "xla_flags", "experiment.xla_flags");
  id.experiment.dynamo = field.nullable(e, "dynamo", "experiment.dynamo");
  id.experiment.torch_xla2 = field.nullable(e, "torch_xla2", "experiment.torch_xla2");
  id.experiment.keep_model_data_on_cuda =
      field.boolean(e, "keep_model_data_on_cuda", "experiment.keep_model_data_on_cuda");
  id.experiment.enable_functionalization =
      field.boolean(e, "enable_functionalization", "experiment.enable_functionalization");
  if (const auto it = e.FindMember("precision"); it != e.MemberEnd())
    id.experiment.precision = in.axis_name(it->value, "precision");
  if (const auto it = e.FindMember("inductor_mode"); it != e.MemberEnd())
    id.experiment.inductor_mode = in.axis_name(it->value, "inductor_mode");
  if (const json_value* v = field.find(e, "batch_size", "experiment.batch_size", true);
      v && !v->IsNull())
    id.batch_size = in.integral(*v, "experiment.batch_size");

  if (const json_value* v = field.find(d, "repeat", "repeat")) id.repeat = in.integer(*v, "repeat");
  if (const json_value* v = field.find(d, "iterations_per_run", "iterations_per_run"))
    id.iterations_per_run = in.integer(*v, "iterations_per_run");
  if (const json_value* v = field.find(d, "timestamp", "timestamp"))
    id.timestamp = in.number(*v, "timestamp");
  r.verification_code = field.text(d, "verification_code", "verification_code");
  if (const json_value* v = field.find(d, "metrics", "metrics")) {
    in.object(*v, "metrics");
    r.metrics.CopyFrom(*v, r.metrics.GetAllocator());
  }
  static const std::string_view known[] = {"model",   "experiment", "repeat", "iterations_per_run",
                                           "metrics", "timestamp",  "verification_code"};
  for (const auto& m : d.GetObject()) {
    const std::string_view name(m.name.GetString(), m.name.GetStringLength());
    if (std::find(std::begin(known), std::end(known), name) != std::end(known)) continue;
    r.extras.AddMember(json_value(m.name, r.extras.GetAllocator()),
                       json_value(m.value, r.extras.GetAllocator()), r.extras.GetAllocator());
  }
  in.check_noise(r.extras);
  check_paired(r, where);
  return r;
}

bool results_record::has(std::string_view key) const {
  return std::find(absent.begin(), absent.end(), key) == absent.end();
}

std::string results_record::to_line() const {
  return record_line(identity, metrics, verification_code, &extras);
}

const json_value* results_record::metric(const char* name) const {
  const auto it = metrics.FindMember(name);
  return it == metrics.MemberEnd() ? nullptr : &it->value;
}

const json_value* results_record::extra(const char* name) const {
  const auto it = extras.FindMember(name);
  return it == extras.MemberEnd() ? nullptr : &it->value;
}

std::optional<noise_verdict> results_record::noise() const {
  const json_value* v = extra("noise");
  if (!v) return std::nullopt;
  return parse_noise_verdict(*v, "noise");
}

std::optional<paired_speedups> results_record::paired() const {
  const json_value* paired = extra("paired");
  if (!paired) return std::nullopt;
  return paired_speedups_from_json(*paired, "record of " + identity.model_name);
}

std::optional<std::string> results_record::error() const {
  const json_value* e = metric("error");
  if (!e) return std::nullopt;
  return e->IsString() ? std::string(e->GetString(), e->GetStringLength()) : to_python_json(*e);
}

std::optional<double> results_record::once_per_record(const char* name) const {
  const json_value* v = metric(name);
  if (v && v->IsArray() && !v->Empty()) v = &(*v)[0];
  if (!v || !v->IsNumber()) return std::nullopt;
  return v->GetDouble();
}

const json_value* results_record::verification() const {
  if (const json_value* v = extra("verification")) return v;
  return metric("verification");
}

json_value once_per_record_list(double value, int repeat, json_allocator& a) {
  json_value list(rapidjson::kArrayType);
  list.PushBack(value, a);
  for (int r = 1; r < repeat; ++r) list.PushBack(0.0, a);
  return list;
}

bool is_once_per_record_metric(std::string_view name) {
  static const std::string_view names[] = {"compile_time_s", "compile_helper_s", "accuracy",
                                           "accuracy_max_abs_error", "accuracy_max_rel_error"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

bool is_skip_error(std::string_view error) { return error.rfind("SKIP", 0) == 0; }

bool results_record::is_skip() const {
  const json_value* e = metric("error");
  return e && e->IsString() && is_skip_error({e->GetString(), e->GetStringLength()});
}

bool results_record::is_failed() const { return metric("error") && !is_skip(); }

std::optional<std::vector<double>> results_record::per_repeat(const char* name) const {
  const json_value* v = metric(name);
  if (!v || !v->IsArray()) return std::nullopt;
  std::vector<double> out;
  out.reserve(v->Size());
  for (const auto& x : v->GetArray()) out.push_back(x.IsNumber() ? x.GetDouble() : std::nan(""));
  return out;
}

std::vector<double> results_record::per_iter_seconds() const {
  if (auto per_iter = per_repeat("per_iter_time")) return *per_iter;
  auto total = per_repeat("total_time");
  if (!total) return {};
  const double iterations = identity.iterations_per_run > 0 ? identity.iterations_per_run : 1;
  for (double& s : *total) s /= iterations;
  return *total;
}

std::vector<numbered_record>
read_records(const std::filesystem::path& path,
             const std::function<void(size_t, const std::string&)>& on_unusable,
             record_reading reading) {
  std::vector<numbered_record> out;
  for (auto& line : read_results(path, on_unusable)) {
    try {
      const std::string where = "line " + std::to_string(line.line_number);
      auto record = reading == record_reading::lenient
                        ? results_record::parse_lenient(line.text, where)
                        : results_record::parse(line.text, where);
      out.push_back({line.line_number, std::move(line.text), std::move(record)});
    } catch (const std::exception& e) {
      on_unusable(line.line_number, e.what());
    }
  }
  return out;
}

std::vector<numbered_record>
read_records_for_report(const std::filesystem::path& path,
                        const std::function<void(const std::string&)>& warn) {
  return read_records(
      path,
      [&](size_t number, const std::string& message) {
        // read_records' messages start with "line N: "; the path:N prefix says it already
        const std::string prefix = "line " + std::to_string(number) + ": ";
        warn(path.string() + ":" + std::to_string(number) + ": skipped: " +
             (message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message));
      },
      record_reading::lenient);
}

}  // namespace benchmatrix
