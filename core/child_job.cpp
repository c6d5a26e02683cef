#include "core/child_job.hpp"

#include "core/text_file.hpp"

#include <set>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// Calls `visit(key, field)` for every child_settings field: the one list the writer and the
/// reader share, so a field cannot be written without being read.
template <class Settings, class Visitor>
void visit_settings(Settings& s, Visitor&& visit) {
  visit("repeat", s.repeat);
  visit("iterations_per_run", s.iterations_per_run);
  visit("pure_wall_time", s.pure_wall_time);
  visit("randomize_input", s.randomize_input);
  visit("paired_baseline", s.paired_baseline);
  visit("collect_full_output", s.collect_full_output);
  visit("batch_size", s.batch_size);
  visit("disable_tf32", s.disable_tf32);
  visit("matmul_precision", s.matmul_precision);
  visit("backend_library", s.backend_library);
  visit("cache_dir", s.cache_dir);
  visit("model_path", s.model_path);
  visit("torchbench_checkout", s.torchbench_checkout);
  visit("random_weights", s.random_weights);
  visit("cold_start", s.cold_start);
  visit("cpus", s.cpus);
  visit("verify_iterations", s.verify_iterations);
  visit("verify_deterministic", s.verify_deterministic);
  visit("verify_tolerance", s.verify_tolerance);
  visit("verify_cosine_similarity", s.verify_cosine_similarity);
  visit("accuracy_metric", s.accuracy_metric);
  visit("accuracy_baseline", s.accuracy_baseline);
  visit("accuracy_rtol", s.accuracy_rtol);
  visit("accuracy_atol", s.accuracy_atol);
  visit("dump_pytorch_profiles", s.dump_pytorch_profiles);
  visit("profile_cuda_cpu", s.profile_cuda_cpu);
  visit("profile_cuda_cpu_individual_ops", s.profile_cuda_cpu_individual_ops);
  visit("profile_cupti", s.profile_cupti);
  visit("save_ir_format", s.save_ir_format);
  visit("dump_hlo", s.dump_hlo);
  visit("memory_pass", s.memory_pass);
  visit("dump_memory_snapshot", s.dump_memory_snapshot);
  visit("collect_dynamo_counters", s.collect_dynamo_counters);
  visit("dump_dynamo_counters", s.dump_dynamo_counters);
  visit("log_level", s.log_level);
  visit("output_dirname", s.output_dirname);
  visit("output_basename", s.output_basename);
  visit("save_output", s.save_output);
  visit("export_what", s.export_what);
  visit("export_dir", s.export_dir);
}

/// Adds members to one JSON object.
class object_writer {
public:
  object_writer(json_value& object, json_allocator& a) : m_object(object), m_a(a) {}
  void operator()(const char* key, const std::string& v) {
    add(key, json_value(v.c_str(), static_cast<rapidjson::SizeType>(v.size()), m_a));
  }
  void operator()(const char* key, const std::optional<std::string>& v) {
    if (v) (*this)(key, *v);
    else add(key, json_value(rapidjson::kNullType));
  }
  void operator()(const char* key, bool v) { add(key, json_value(v)); }
  void operator()(const char* key, int v) { add(key, json_value(v)); }
  void operator()(const char* key, double v) { add(key, json_value(v)); }
  void operator()(const char* key, const std::optional<long long>& v) {
    add(key, v ? json_value(static_cast<int64_t>(*v)) : json_value(rapidjson::kNullType));
  }
  void operator()(const char* key, const std::optional<double>& v) {
    add(key, v ? json_value(*v) : json_value(rapidjson::kNullType));
  }

private:
  void add(const char* key, json_value value) {
    m_object.AddMember(json_value(key, m_a), value, m_a);
  }
  json_value& m_object;
  json_allocator& m_a;
};

/// Reads members of one JSON object; every error names `where` and the key's path.
class object_reader {
public:
  object_reader(const json_value& object, std::string where, std::string prefix)
      : m_object(object), m_where(std::move(where)), m_prefix(std::move(prefix)) {
    if (m_object.IsObject()) return;
    if (m_prefix.empty()) throw std::runtime_error(m_where + ": expected a JSON object");
    throw std::runtime_error(m_where + ": key '" + m_prefix.substr(0, m_prefix.size() - 1) +
                             "': expected an object");
  }
  void operator()(const char* key, std::string& v) {
    const auto& value = member(key);
    if (!value.IsString()) fail(key, "a string");
    v.assign(value.GetString(), value.GetStringLength());
  }
  void operator()(const char* key, std::optional<std::string>& v) {
    const auto& value = member(key);
    if (value.IsNull()) return v.reset();
    if (!value.IsString()) fail(key, "a string or null");
    v.emplace(value.GetString(), value.GetStringLength());
  }
  void operator()(const char* key, bool& v) {
    const auto& value = member(key);
    if (!value.IsBool()) fail(key, "true or false");
    v = value.GetBool();
  }
  void operator()(const char* key, int& v) {
    const auto& value = member(key);
    if (!value.IsInt()) fail(key, "an integer");
    v = value.GetInt();
  }
  void operator()(const char* key, double& v) {
    const auto& value = member(key);
    if (!value.IsNumber()) fail(key, "a number");
    v = value.GetDouble();
  }
  void operator()(const char* key, std::optional<long long>& v) {
    const auto& value = member(key);
    if (value.IsNull()) return v.reset();
    if (!value.IsInt64()) fail(key, "an integer or null");
    v = value.GetInt64();
  }
  void operator()(const char* key, std::optional<double>& v) {
    const auto& value = member(key);
    if (value.IsNull()) return v.reset();
    if (!value.IsNumber()) fail(key, "a number or null");
    v = value.GetDouble();
  }
  const json_value& member(const char* key) {
    m_read.insert(key);
    const auto it = m_object.FindMember(key);
    if (it == m_object.MemberEnd())
      throw std::runtime_error(m_where + ": missing key '" + m_prefix + key + "'");
    return it->value;
  }
  /// Every key of the object was read: a key this version does not know is an error, not ignored.
  void check_no_other_keys() const {
    for (auto it = m_object.MemberBegin(); it != m_object.MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      if (!m_read.count(key))
        throw std::runtime_error(m_where + ": unknown key '" + m_prefix + key + "'");
    }
  }
  [[noreturn]] void fail(const std::string& key, const char* expected) const {
    throw std::runtime_error(m_where + ": key '" + m_prefix + key + "': expected " + expected);
  }

private:
  const json_value& m_object;
  std::string m_where;
  std::string m_prefix;
  std::set<std::string> m_read;
};

child_role parse_role(const std::string& name, const object_reader& reader) {
  if (name == "timing") return child_role::timing;
  if (name == "verifier") return child_role::verifier;
  if (name == "compile_ahead") return child_role::compile_ahead;
  reader.fail("role", "\"timing\", \"verifier\" or \"compile_ahead\"");
}

}  // namespace

const char* child_role_name(child_role role) {
  switch (role) {
    case child_role::timing: return "timing";
    case child_role::verifier: return "verifier";
    case child_role::compile_ahead: return "compile_ahead";
  }
  return "timing";
}

std::string child_job_to_json(const child_job& job) {
  json_document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  object_writer write(d, a);
  write("role", std::string(child_role_name(job.role)));
  write("suite_name", job.suite_name);
  write("model_name", job.model_name);
  json_document experiment = parse_json(job.experiment.to_config_json(), "experiment config");
  d.AddMember("experiment", json_value(experiment, a), a);
  write("timestamp", job.timestamp);
  write("result_path", job.result_path);
  json_value settings(rapidjson::kObjectType);
  object_writer write_settings(settings, a);
  visit_settings(job.settings, write_settings);
  d.AddMember("settings", settings, a);
  return to_python_json(d);
}

child_job child_job_from_json(std::string_view text, std::string_view what) {
  const std::string where(what);
  const json_document d = parse_json(text, where);
  object_reader read(d, where, "");
  child_job job;
  std::string role;
  read("role", role);
  job.role = parse_role(role, read);
  read("suite_name", job.suite_name);
  read("model_name", job.model_name);
  const auto& experiment = read.member("experiment");
  if (!experiment.IsObject()) read.fail("experiment", "an object (the --experiment-config dict)");
  try {
    job.experiment = experiment_config::from_config_json(to_python_json(experiment));
  } catch (const std::exception& e) {
    throw std::runtime_error(where + ": key 'experiment': " + e.what());
  }
  read("timestamp", job.timestamp);
  read("result_path", job.result_path);
  object_reader read_settings(read.member("settings"), where, "settings.");
  visit_settings(job.settings, read_settings);
  read_settings.check_no_other_keys();
  read.check_no_other_keys();
  return job;
}

void write_child_job_file(const std::filesystem::path& path, const child_job& job) {
  replace_text_file(path, child_job_to_json(job) + "\n");
}

child_job read_child_job_file(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path))
    throw std::runtime_error("job file " + path.string() + ": no such file");
  return child_job_from_json(read_text_file(path), "job file " + path.string());
}

namespace {
std::optional<child_role> g_running_child_role;  // one job per process: set once, before the model builds
}  // namespace

std::optional<child_role> running_child_role() { return g_running_child_role; }
void set_running_child_role(child_role role) { g_running_child_role = role; }

}  // namespace benchmatrix
