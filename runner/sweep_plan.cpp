#include "runner/sweep_plan.hpp"

#include "runner/experiment_matrix.hpp"
#include "runner/resume.hpp"

#include <map>

namespace benchmatrix {

std::string planned_config::model_label(const runner_options& options) const {
  return options.suite_names.size() > 1 ? suite + "/" + model : model;
}

std::vector<planned_config> plan_configs(const std::vector<selected_model>& models,
                                         const runner_options& options) {
  const auto experiments = expand_experiment_matrix(options);
  const bool several_suites = options.suite_names.size() > 1;
  std::vector<planned_config> configs;
  for (size_t m = 0; m < models.size(); ++m) {
    json_document model_config(rapidjson::kObjectType);
    auto& allocator = model_config.GetAllocator();
    if (several_suites)
      model_config.AddMember("suite_name", json_value(models[m].suite.c_str(), allocator),
                             allocator);
    model_config.AddMember("model_name", json_value(models[m].model.c_str(), allocator),
                           allocator);
    for (const auto& e : experiments) {
      planned_config c;
      c.model_index = m + 1;
      c.config_index = configs.size() + 1;
      c.suite = models[m].suite;
      c.model = models[m].model;
      c.experiment = e;
      c.model_json = to_python_json(model_config);
      configs.push_back(std::move(c));
    }
  }
  return configs;
}

void check_model_files_apart(const std::vector<selected_model>& models,
                             const runner_options& options) {
  std::string file_flag;  // the first flag that writes files named by model, if any
  for (const auto& [given, name] :
       {std::pair{options.save_output, "--save-output"},
        std::pair{options.dump_pytorch_profiles, "--dump-pytorch-profiles"},
        std::pair{!options.save_ir_format.empty(), "--save-ir-format"},
        std::pair{options.dump_hlo, "--dump-hlo"},
        std::pair{options.dump_memory_snapshot, "--dump-memory-snapshot"},
        std::pair{options.dump_dynamo_counters, "--dump-dynamo-counters"},
        std::pair{!options.export_what.empty(), "--export"}})
    if (given && file_flag.empty()) file_flag = name;
  if (file_flag.empty()) return;
  std::map<std::string, std::string> suite_of;  // model name -> the first suite that has it
  for (const auto& m : models) {
    const auto [it, inserted] = suite_of.emplace(m.model, m.suite);
    if (!inserted && it->second != m.suite)
      throw usage_error("model '" + m.model + "' is in suites " + it->second + " and " + m.suite +
                        ", and " + file_flag +
                        " writes files named by model (under --output-dirname/<model>/ or "
                        "--export-dir): the two would overwrite each other's. Run those suites in "
                        "separate sweeps with different output directories");
  }
}

record_identity planned_identity(const planned_config& config, const runner_options& options,
                                 const std::string& accelerator_model) {
  record_identity id;
  id.suite_name = config.suite;
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
