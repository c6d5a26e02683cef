#include "backends/paired_baseline.hpp"

#include "backends/backend_registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace benchmatrix {

std::vector<std::string> paired_baseline_choices() {
  std::vector<std::string> out = {"eager"};
  for (const std::string& dynamo : dynamo_choices()) {
    const backend_descriptor* backend = find_dynamo_backend(dynamo);
    if (backend && !backend->dynamo_choice->needs_xla && !backend->identity.xla) out.push_back(dynamo);
  }
  return out;
}

std::optional<experiment_config> paired_baseline_experiment(const experiment_config& experiment,
                                                            const std::string& baseline) {
  const auto choices = paired_baseline_choices();
  if (std::find(choices.begin(), choices.end(), baseline) == choices.end()) {
    std::string names;
    for (const auto& choice : choices) names += (names.empty() ? "" : ", ") + choice;
    throw std::invalid_argument("--paired-baseline: unknown backend '" + baseline +
                                "' (choose from " + names + ")");
  }
  experiment_config paired = experiment;
  paired.dynamo = baseline == "eager" ? nullable_string() : nullable_string(baseline);
  paired.xla.reset();
  paired.xla_flags.reset();
  paired.torch_xla2.reset();
  paired.keep_model_data_on_cuda = false;
  if (paired.dynamo == experiment.dynamo && !experiment.xla && !experiment.torch_xla2)
    return std::nullopt;
  return paired;
}

}  // namespace benchmatrix
