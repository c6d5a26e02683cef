#include "runner/expected_durations.hpp"

#include "core/argparse.hpp"
#include "core/log.hpp"
#include "core/results_record.hpp"
#include "runner/resume.hpp"

#include <algorithm>
#include <cmath>

namespace benchmatrix {
namespace {

std::optional<double> recorded_seconds(const results_record& record) {
  if (const json_value* placement = record.extra("placement"); placement && placement->IsObject())
    if (const auto wall = placement->FindMember("wall_time_s");
        wall != placement->MemberEnd() && wall->value.IsNumber())
      return wall->value.GetDouble();
  if (record.error()) return std::nullopt;
  const auto total = record.per_repeat("total_time");
  if (!total || total->empty()) return std::nullopt;
  double sum = 0;
  for (const double t : *total) sum += t;
  if (std::isnan(sum)) return std::nullopt;  // an entry that is not a number
  return sum;
}

}  // namespace

expected_durations expected_durations::load(const std::filesystem::path& results_file,
                                            std::optional<long long> batch_size) {
  if (!std::filesystem::is_regular_file(results_file))
    throw usage_error("argument --expected-times: no results file " + results_file.string());
  expected_durations durations;
  const auto lines = read_records(results_file, [&](size_t number, const std::string& error) {
    log_warning("--expected-times: ignoring corrupt line " + std::to_string(number) + " of " +
                results_file.string() + " (" + error + ")");
  });
  for (const auto& line : lines) {
    const auto seconds = recorded_seconds(line.record);
    if (!seconds) continue;
    auto& slot = durations.m_seconds[placement_free_fingerprint(line.record.identity, batch_size)];
    slot = std::max(slot, *seconds);  // the slowest sighting: a safe upper estimate
  }
  return durations;
}

std::optional<double> expected_durations::seconds(const std::string& key) const {
  const auto it = m_seconds.find(key);
  if (it == m_seconds.end()) return std::nullopt;
  return it->second;
}

void order_longest_first(std::vector<planned_config>& configs, const expected_durations& durations,
                         const runner_options& options) {
  std::vector<std::pair<std::optional<double>, planned_config>> keyed;
  keyed.reserve(configs.size());
  for (auto& c : configs) keyed.emplace_back(durations.seconds(placement_free_key(c, options)), std::move(c));
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    if (a.first.has_value() != b.first.has_value()) return !a.first.has_value();
    return a.first.has_value() && *a.first > *b.first;
  });
  configs.clear();
  for (auto& [seconds, c] : keyed) configs.push_back(std::move(c));
}

}  // namespace benchmatrix
