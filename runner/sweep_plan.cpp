#include "runner/sweep_plan.hpp"

#include "runner/experiment_matrix.hpp"
#include "runner/resume.hpp"

namespace benchmatrix {

std::vector<planned_config> plan_configs(const std::vector<std::string>& models,
                                         const runner_options& options) {
  const auto experiments = expand_experiment_matrix(options);
  std::vector<planned_config> configs;
  for (size_t m = 0; m < models.size(); ++m) {
    json_document model_config(rapidjson::kObjectType);
    model_config.AddMember("model_name", json_value(models[m].c_str(), model_config.GetAllocator()),
                           model_config.GetAllocator());
    for (const auto& e : experiments) {
      planned_config c;
      c.model_index = m + 1;
      c.config_index = configs.size() + 1;
      c.model = models[m];
      c.experiment = e;
      c.model_json = to_python_json(model_config);
      configs.push_back(std::move(c));
    }
  }
  return configs;
}

record_identity planned_identity(const planned_config& config, const runner_options& options,
                                 const std::string& accelerator_model) {
  record_identity id;
  id.suite_name = options.suite_name;
  id.model_name = config.model;
  id.experiment = config.experiment;
  id.accelerator_model = accelerator_model;
  id.batch_size = options.batch_size;
  id.repeat = options.repeat;
  id.iterations_per_run = options.iterations_per_run;
  id.timestamp = options.timestamp;
  return id;
}

std::string placement_free_key(const planned_config& config, const runner_options& options) {
  json_document d;
  const auto id = planned_identity(config, options, "");
  return placement_free_fingerprint(id.model_json(d.GetAllocator()),
                                    id.experiment_json(d.GetAllocator()), options.batch_size);
}

}  // namespace benchmatrix
