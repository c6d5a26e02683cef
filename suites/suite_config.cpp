#include "suites/suite_config.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace benchmatrix {
namespace {

/// Adds every string of a (possibly nested) list to `out`; PyTorch's YAML nests lists via anchors.
void flatten_names(const YAML::Node& node, const std::string& where, std::set<std::string>& out) {
  if (!node || node.IsNull()) return;
  if (node.IsScalar()) {
    out.insert(node.Scalar());
  } else if (node.IsSequence()) {
    for (const auto& item : node) flatten_names(item, where, out);
  } else {
    throw std::runtime_error(where + ": expected a list of model names");
  }
}

const YAML::Node child(const YAML::Node& node, const char* key, const std::string& where) {
  if (!node || node.IsNull()) return YAML::Node();
  if (!node.IsMap()) throw std::runtime_error(where + ": expected a mapping");
  return node[key];
}

std::string python_str_of_scalar(const YAML::Node& node) {
  if (node.IsNull()) return "None";
  const std::string& s = node.Scalar();
  if (s == "true") return "True";
  if (s == "false") return "False";
  return s;
}

std::string experiment_attribute(const experiment_config& e, const std::string& key) {
  if (key == "accelerator") return e.accelerator;
  if (key == "xla") return e.xla.value_or("None");
  if (key == "xla_flags") return e.xla_flags.value_or("None");
  if (key == "dynamo") return e.dynamo.value_or("None");
  if (key == "torch_xla2") return e.torch_xla2.value_or("None");
  if (key == "test") return e.test;
  if (key == "keep_model_data_on_cuda") return e.keep_model_data_on_cuda ? "True" : "False";
  if (key == "enable_functionalization") return e.enable_functionalization ? "True" : "False";
  throw std::runtime_error("unknown experiment attribute '" + key + "'");
}

}  // namespace

std::string yaml_test_key(const std::string& test) {
  return test == "train" ? "training" : "inference";
}

suite_config suite_config::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the suite configuration file");
  std::stringstream text;
  text << in.rdbuf();
  return load_text(text.str(), path);
}

suite_config suite_config::load_text(const std::string& yaml, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(origin + ": " + e.what());
  }
  suite_config c;
  c.m_origin = origin;
  if (!root || root.IsNull()) return c;
  if (!root.IsMap()) throw std::runtime_error(origin + ": expected a mapping at the top level");
  try {
    const auto skip = child(root, "skip", origin + ": skip");
    flatten_names(child(skip, "all", origin), origin + ": skip.all", c.m_skip_all);
    flatten_names(child(skip, "multiprocess", origin), origin + ": skip.multiprocess",
                  c.m_skip_multiprocess);
    for (const char* group : {"test", "device"}) {
      const auto node = child(skip, group, origin + ": skip." + group);
      if (!node || node.IsNull()) continue;
      if (!node.IsMap()) throw std::runtime_error(origin + ": skip." + group + ": expected a mapping");
      auto& target = std::string(group) == "test" ? c.m_skip_test : c.m_skip_device;
      for (const auto& entry : node) {
        const auto key = entry.first.as<std::string>();
        flatten_names(entry.second, origin + ": skip." + group + "." + key, target[key]);
      }
    }
    const auto batch = child(root, "batch_size", origin + ": batch_size");
    for (const char* test : {"training", "inference"}) {
      const auto node = child(batch, test, origin + ": batch_size");
      if (!node || node.IsNull()) continue;
      if (!node.IsMap())
        throw std::runtime_error(origin + ": batch_size." + test + ": expected model: size pairs");
      for (const auto& entry : node) {
        const auto model = entry.first.as<std::string>();
        long long size = 0;
        try {
          size = entry.second.as<long long>();
        } catch (const YAML::Exception&) {
          throw std::runtime_error(origin + ": batch_size." + test + "." + model +
                                   ": expected a positive integer");
        }
        if (size <= 0)
          throw std::runtime_error(origin + ": batch_size." + test + "." + model +
                                   ": expected a positive integer");
        c.m_batch_size[test][model] = size;
      }
    }
    flatten_names(root["dont_change_batch_size"], origin + ": dont_change_batch_size",
                  c.m_dont_change_batch_size);
    flatten_names(root["canary_models"], origin + ": canary_models", c.m_canary_models);
    const auto dtype = child(root, "dtype", origin + ": dtype");
    flatten_names(child(dtype, "force_amp_for_fp16_bf16_models", origin + ": dtype"),
                  origin + ": dtype.force_amp_for_fp16_bf16_models", c.m_force_amp);
    flatten_names(child(dtype, "force_fp16_for_bf16_models", origin + ": dtype"),
                  origin + ": dtype.force_fp16_for_bf16_models", c.m_force_fp16);
    const auto tolerance = child(root, "tolerance", origin + ": tolerance");
    for (const char* list : {"higher", "even_higher", "higher_fp16", "higher_bf16", "cosine"})
      flatten_names(child(tolerance, list, origin), origin + ": tolerance." + list,
                    c.m_tolerance[list]);
    const auto optimizer = child(root, "optimizer", origin + ": optimizer");
    flatten_names(child(optimizer, "sgd", origin + ": optimizer"), origin + ": optimizer.sgd",
                  c.m_optimizer_sgd);
    flatten_names(child(optimizer, "none", origin + ": optimizer"), origin + ": optimizer.none",
                  c.m_optimizer_none);
    for (const auto& model : c.m_optimizer_none)
      if (c.m_optimizer_sgd.count(model))
        throw std::runtime_error(origin + ": optimizer: " + model +
                                 " is in both optimizer.sgd and optimizer.none; expected one");
    const auto accuracy_skip =
        child(child(root, "accuracy", origin + ": accuracy"), "skip", origin + ": accuracy.skip");
    flatten_names(child(accuracy_skip, "large_models", origin),
                  origin + ": accuracy.skip.large_models", c.m_verifier_skip);
    flatten_names(child(accuracy_skip, "eager_not_deterministic", origin),
                  origin + ": accuracy.skip.eager_not_deterministic", c.m_verifier_skip);
    const auto deny = root["deny"];
    if (deny && !deny.IsNull()) {
      if (!deny.IsMap()) throw std::runtime_error(origin + ": deny: expected model: [rules]");
      for (const auto& entry : deny) {
        const auto model = entry.first.as<std::string>();
        for (const auto& rule_node : entry.second) {
          deny_rule rule;
          for (const auto& attribute : rule_node) {
            const auto key = attribute.first.as<std::string>();
            experiment_attribute(experiment_config{}, key);  // throws on an unknown key
            rule[key] = python_str_of_scalar(attribute.second);
          }
          c.m_deny[model].push_back(std::move(rule));
        }
      }
    }
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(origin + ": " + e.what());
  }
  return c;
}

std::optional<std::string> suite_config::skip_reason(const std::string& model,
                                                     const experiment_config& e) const {
  if (m_skip_all.count(model)) return "model is in skip.all of " + m_origin;
  const auto test_key = yaml_test_key(e.test);
  if (auto it = m_skip_test.find(test_key); it != m_skip_test.end() && it->second.count(model))
    return "model is in skip.test." + test_key + " of " + m_origin;
  if (auto it = m_skip_device.find(e.accelerator);
      it != m_skip_device.end() && it->second.count(model))
    return "model is in skip.device." + e.accelerator + " of " + m_origin;
  if (m_skip_multiprocess.count(model)) return "model is in skip.multiprocess of " + m_origin;
  if (auto it = m_deny.find(model); it != m_deny.end()) {
    for (const auto& rule : it->second) {
      bool all_equal = true;
      for (const auto& [key, value] : rule) all_equal &= experiment_attribute(e, key) == value;
      if (all_equal) return "model and experiment match a deny entry of " + m_origin;
    }
  }
  return std::nullopt;
}

std::optional<long long> suite_config::batch_size(const std::string& model,
                                                  const std::string& test) const {
  const auto it = m_batch_size.find(yaml_test_key(test));
  if (it == m_batch_size.end()) return std::nullopt;
  const auto found = it->second.find(model);
  if (found == it->second.end()) return std::nullopt;
  return found->second;
}

bool suite_config::dont_change_batch_size(const std::string& model) const {
  return m_dont_change_batch_size.count(model) != 0;
}

bool suite_config::in_tolerance_list(const std::string& list, const std::string& model) const {
  const auto it = m_tolerance.find(list);
  return it != m_tolerance.end() && it->second.count(model) != 0;
}

bool suite_config::skip_verifier(const std::string& model) const {
  return m_verifier_skip.count(model) != 0;
}

bool suite_config::trains_with_sgd(const std::string& model) const {
  return m_optimizer_sgd.count(model) != 0;
}
bool suite_config::skips_optimizer(const std::string& model) const {
  return m_optimizer_none.count(model) != 0;
}

bool suite_config::force_amp(const std::string& model) const { return m_force_amp.count(model); }
bool suite_config::force_fp16(const std::string& model) const { return m_force_fp16.count(model); }

}  // namespace benchmatrix
