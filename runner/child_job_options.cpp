#include "runner/child_job_options.hpp"

#include "backends/paired_baseline.hpp"

#include <algorithm>
#include <stdexcept>

namespace benchmatrix {

child_job make_child_job(const runner_options& o, child_role role, const std::string& suite_name,
                         const experiment_config& experiment, const std::string& model_name,
                         const std::string& result_path) {
  child_job job;
  job.role = role;
  job.suite_name = suite_name;
  job.model_name = model_name;
  job.experiment = experiment;
  job.timestamp = o.timestamp;
  job.result_path = result_path;
  child_settings& s = job.settings;
  s.repeat = o.repeat;
  s.iterations_per_run = o.iterations_per_run;
  s.pure_wall_time = o.pure_wall_time;
  s.randomize_input = o.randomize_input;
  // Only the timing child pairs (and the compile-ahead child builds what it will load), and only
  // a config whose own backend is not the baseline.
  if (role != child_role::verifier && !o.paired_baseline.empty() &&
      paired_baseline_experiment(experiment, o.paired_baseline))
    s.paired_baseline = o.paired_baseline;
  s.collect_full_output = o.collect_full_output;
  s.batch_size = o.batch_size;
  s.disable_tf32 = o.disable_tf32;
  s.matmul_precision = o.matmul_precision;
  s.backend_library = o.backend_library;
  s.cache_dir = o.cache_dir;
  // Only the exported suite's models come from --model-path (another suite's child of the same
  // sweep need not load those programs).
  if (suite_name == "exported") s.model_path = o.model_path;
  if (suite_name == "torchbench") s.torchbench_checkout = o.torchbench_checkout;
  s.random_weights = o.random_weights;
  s.cold_start = o.cold_start;
  s.verify_iterations = o.verify_iterations;
  s.verify_deterministic = o.verify_deterministic;
  s.verify_tolerance = o.verify_tolerance;
  s.verify_cosine_similarity = o.verify_cosine_similarity;
  s.accuracy_metric = std::find(o.metrics.begin(), o.metrics.end(), "accuracy") != o.metrics.end();
  s.accuracy_baseline = o.accuracy_baseline;
  s.accuracy_rtol = o.accuracy_rtol;
  s.accuracy_atol = o.accuracy_atol;
  s.dump_pytorch_profiles = o.dump_pytorch_profiles;
  s.profile_cuda_cpu = o.profile_cuda_cpu;
  s.profile_cuda_cpu_individual_ops = o.profile_cuda_cpu_individual_ops;
  s.profile_cupti = o.profile_cupti;
  s.save_ir_format = o.save_ir_format;
  s.dump_hlo = o.dump_hlo;
  s.memory_pass = o.memory_pass;
  s.dump_memory_snapshot = o.dump_memory_snapshot;
  s.collect_dynamo_counters = o.collect_dynamo_counters;
  s.dump_dynamo_counters = o.dump_dynamo_counters;
  s.log_level = o.log_level;
  s.output_dirname = o.output_dirname;
  s.output_basename = o.output_basename;
  s.save_output = o.save_output;
  s.export_what = o.export_what;
  s.export_dir = o.export_dir;
  return job;
}

selected_model model_config_model(const std::string& model_config,
                                  const std::vector<std::string>& suite_names) {
  const auto d = parse_json(model_config, "--model-config");
  const std::string expected =
      "--model-config: expected {\"model_name\": \"<name>\"}" +
      std::string(suite_names.size() > 1 ? " with \"suite_name\": \"<suite>\"" : "") + ", got " +
      model_config;
  if (!d.IsObject() || !d.HasMember("model_name") || !d["model_name"].IsString())
    throw std::runtime_error(expected);
  std::string listed;
  for (const auto& name : suite_names) listed += (listed.empty() ? "" : ", ") + name;
  selected_model m;
  m.model = d["model_name"].GetString();
  if (const auto suite = d.FindMember("suite_name"); suite != d.MemberEnd()) {
    if (!suite->value.IsString()) throw std::runtime_error(expected);
    m.suite = suite->value.GetString();
    if (std::find(suite_names.begin(), suite_names.end(), m.suite) == suite_names.end())
      throw std::runtime_error("--model-config: suite_name '" + m.suite +
                               "' is not a suite of --suite-name (" + listed + ")");
  } else if (suite_names.size() == 1) {
    m.suite = suite_names.front();
  } else {
    throw std::runtime_error("--model-config: --suite-name lists several suites (" + listed +
                             "); name the model's suite: {\"suite_name\": \"<suite>\", "
                             "\"model_name\": \"" + m.model + "\"}");
  }
  return m;
}

child_job hand_run_job(const runner_options& o) {
  if (!o.experiment_config || !o.model_config)
    throw std::logic_error("hand_run_job: --experiment-config and --model-config are both needed");
  const auto model = model_config_model(*o.model_config, o.suite_names);
  return make_child_job(o, child_role::timing, model.suite,
                        experiment_config::from_config_json(*o.experiment_config), model.model,
                        /*result_path=*/"");
}

}  // namespace benchmatrix
