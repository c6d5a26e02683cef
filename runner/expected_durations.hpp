// --expected-times: how long each config took in an earlier sweep, so a concurrent sweep can start
// the longest configs first (a long config started last leaves the other GPUs idle at the end).
#pragma once

#include "core/argparse.hpp"
#include "runner/sweep_plan.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace benchmatrix {

class expected_durations {
public:
  /// Reads an earlier results file. Per config (placement_free_fingerprint: any host or GPU), the
  /// seconds its record shows: placement.wall_time_s (the whole child) when present, else the sum of
  /// metrics.total_time (the timed repeats only). Error records give no time. Throws usage_error when
  /// the file does not exist; corrupt lines are skipped with a warning.
  static expected_durations load(const std::filesystem::path& results_file,
                                 std::optional<long long> batch_size);

  /// Seconds for the config with this placement_free_key, if the earlier sweep timed it.
  [[nodiscard]] std::optional<double> seconds(const std::string& key) const;
  [[nodiscard]] size_t size() const { return m_seconds.size(); }

private:
  std::map<std::string, double> m_seconds;
};

/// Reorders `configs`: those without an expected time first (they may be long; starting them early
/// is the safe guess), in their planned order, then the timed ones longest first. Stable.
void order_longest_first(std::vector<planned_config>& configs, const expected_durations& durations,
                         const runner_options& options);

}  // namespace benchmatrix
