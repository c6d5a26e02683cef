#include "runner/experiment_matrix.hpp"

#include "backends/backend_registry.hpp"

#include <algorithm>

namespace benchmatrix {
namespace {

template <typename T> std::vector<T> unique_in_order(const std::vector<T>& values) {
  std::vector<T> out;
  for (const auto& v : values)
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

/// §2.2 rules 2, 3, 5 and 6: combinations that are meaningless everywhere are dropped. The rules of
/// a dynamo value are its backend's (backends/backend_registry.hpp: dynamo_choice_rules; rule 3
/// extends to torchscript and cudagraphs, which run LibTorch on the device as inductor does).
bool is_valid(const experiment_config& c) {
  if (c.torch_xla2 && c.dynamo) return false;  // torch_xla2 does not support dynamo
  const backend_descriptor* backend = c.dynamo ? find_dynamo_backend(*c.dynamo) : nullptr;
  if (backend) {
    const dynamo_choice_rules& rules = *backend->dynamo_choice;
    if (rules.needs_xla ? !c.xla : (c.accelerator == "tpu" || c.xla)) return false;
  }
  if (c.accelerator == "tpu" && !c.xla) return false;
  if ((c.accelerator == "cpu" || c.accelerator == "cuda") && c.xla == "XRT") return false;
  if (c.keep_model_data_on_cuda && !(backend && backend->dynamo_choice->keeps_model_data_on_cuda))
    return false;
  return true;
}

}  // namespace

std::vector<experiment_config> expand_experiment_matrix(const runner_options& o) {
  const auto accelerators = o.accelerator.empty() ? std::vector<std::string>{"cpu", "cuda", "tpu"}
                                                  : unique_in_order(o.accelerator);
  const auto xlas = o.xla.empty() ? std::vector<nullable_string>{std::nullopt, "PJRT", "XRT"}
                                  : unique_in_order(o.xla);
  const auto xla_flags = o.xla_flags.empty() ? std::vector<nullable_string>{std::nullopt}
                                             : unique_in_order(o.xla_flags);
  const auto dynamos = o.dynamo.empty() ? default_dynamo_axis() : unique_in_order(o.dynamo);
  std::vector<nullable_string> torch_xla2s;
  for (const auto& v : unique_in_order(o.torch_xla2)) torch_xla2s.emplace_back(v);
  if (torch_xla2s.empty()) torch_xla2s.emplace_back(std::nullopt);
  const auto tests =
      o.test.empty() ? std::vector<std::string>{"eval", "train"} : unique_in_order(o.test);
  const auto precisions = o.precision.empty()
                              ? std::vector<std::string>{std::string(default_precision)}
                              : unique_in_order(o.precision);
  const auto inductor_modes = o.inductor_mode.empty()
                                  ? std::vector<std::string>{std::string(default_inductor_mode)}
                                  : unique_in_order(o.inductor_mode);

  // Odometer in the original's axis order: accelerator outermost, enable_functionalization fastest;
  // benchmatrix's precision and Inductor mode inside test. The mode is an axis of inductor configs
  // only: every other config runs once, at the default mode.
  std::vector<experiment_config> configs;
  for (const auto& accelerator : accelerators)
    for (const auto& xla : xlas)
      for (const auto& flags : xla_flags)
        for (const auto& dynamo : dynamos)
          for (const auto& torch_xla2 : torch_xla2s)
            for (const auto& test : tests)
              for (const auto& precision : precisions) {
                const bool inductor = dynamo == "inductor";
                const std::vector<std::string> modes =
                    inductor ? inductor_modes
                             : std::vector<std::string>{std::string(default_inductor_mode)};
                for (const auto& mode : modes) {
                  experiment_config c{accelerator, xla,  flags, dynamo, torch_xla2, test,
                                      o.keep_model_data_on_cuda, o.enable_functionalization,
                                      precision, mode};
                  if (is_valid(c)) configs.push_back(std::move(c));
                }
              }
  return configs;
}

}  // namespace benchmatrix
