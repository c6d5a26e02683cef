// configs/torchbench.yaml: our own file with the structure of PyTorch's benchmarks/dynamo/torchbench.yaml
// (shared/reference/xla_runner.md §7.1): skip lists, batch sizes, tolerances, precision lists.
// Torch-free: the parent uses it for the compatibility skip (§2.5) before any child starts.
#pragma once

#include "core/experiment_config.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace benchmatrix {

class suite_config {
public:
  /// Loads a YAML file. Throws std::runtime_error naming the file and the offending key.
  [[nodiscard]] static suite_config load_file(const std::string& path);
  /// Loads YAML text; `origin` names it in errors.
  [[nodiscard]] static suite_config load_text(const std::string& yaml, const std::string& origin);

  /// Why the compatibility rules skip this model in this experiment (nullopt: run it).
  /// Rules, in order: skip.all, skip.test.{training|inference}, skip.device.<accelerator>,
  /// skip.multiprocess, then any `deny` entry whose attributes all equal the experiment's.
  [[nodiscard]] std::optional<std::string> skip_reason(const std::string& model,
                                                       const experiment_config& experiment) const;

  /// batch_size.{training|inference}.<model>, if listed.
  [[nodiscard]] std::optional<long long> batch_size(const std::string& model,
                                                    const std::string& test) const;
  /// Models that always use their own default batch size.
  [[nodiscard]] bool dont_change_batch_size(const std::string& model) const;
  /// canary_models: the models of a TorchBench checkout's torchbenchmark/canary_models/ that run
  /// beside torchbenchmark/models/ (PyTorch's harness lists no other canary model).
  [[nodiscard]] const std::set<std::string>& canary_models() const { return m_canary_models; }
  /// dtype.force_amp_for_fp16_bf16_models / dtype.force_fp16_for_bf16_models.
  [[nodiscard]] bool force_amp(const std::string& model) const;
  [[nodiscard]] bool force_fp16(const std::string& model) const;
  /// tolerance.<list>: "higher", "even_higher", "higher_fp16", "higher_bf16" or "cosine" (the
  /// verifier's rule: verifier/tolerance.hpp).
  [[nodiscard]] bool in_tolerance_list(const std::string& list, const std::string& model) const;
  /// optimizer.sgd: the train step's optimizer is SGD instead of Adam (lr 0.01 both; PyTorch's
  /// BENCHMARK_USE_SGD). optimizer.none: no optimizer, only gradients (PyTorch's
  /// CI_SKIP_OPTIMIZER). Backends choose with train_optimizer (backends/backend.hpp).
  [[nodiscard]] bool trains_with_sgd(const std::string& model) const;
  [[nodiscard]] bool skips_optimizer(const std::string& model) const;
  /// accuracy.skip.large_models or accuracy.skip.eager_not_deterministic: the verifier skips it.
  [[nodiscard]] bool skip_verifier(const std::string& model) const;

private:
  using name_set = std::set<std::string>;
  using deny_rule = std::map<std::string, std::string>;  // experiment key -> str() of its value

  std::string m_origin;
  name_set m_skip_all;
  std::map<std::string, name_set> m_skip_test;    // training | inference
  std::map<std::string, name_set> m_skip_device;  // cpu | cuda | ...
  name_set m_skip_multiprocess;
  std::map<std::string, std::map<std::string, long long>> m_batch_size;  // test -> model -> size
  name_set m_dont_change_batch_size;
  name_set m_canary_models;
  name_set m_force_amp;
  name_set m_force_fp16;
  std::map<std::string, name_set> m_tolerance;  // higher | even_higher | higher_fp16 | ...
  name_set m_verifier_skip;
  name_set m_optimizer_sgd;
  name_set m_optimizer_none;
  std::map<std::string, std::vector<deny_rule>> m_deny;
};

/// "training" for train, "inference" for eval: the YAML's test keys.
[[nodiscard]] std::string yaml_test_key(const std::string& test);

}  // namespace benchmatrix
