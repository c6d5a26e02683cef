#include "runner/expected_durations.hpp"

#include "core/results_file.hpp"
#include "core/argparse.hpp"
#include "core/log.hpp"
#include "runner/resume.hpp"

#include <algorithm>

namespace benchmatrix {
namespace {

const json_value* member(const json_value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  const auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::optional<double> recorded_seconds(const json_value& record) {
  if (const json_value* placement = member(record, "placement"))
    if (const json_value* wall = member(*placement, "wall_time_s"); wall && wall->IsNumber())
      return wall->GetDouble();
  const json_value* metrics = member(record, "metrics");
  if (!metrics || member(*metrics, "error")) return std::nullopt;
  const json_value* total = member(*metrics, "total_time");
  if (!total || !total->IsArray() || total->Empty()) return std::nullopt;
  double sum = 0;
  for (const auto& t : total->GetArray()) {
    if (!t.IsNumber()) return std::nullopt;
    sum += t.GetDouble();
  }
  return sum;
}

}  // namespace

expected_durations expected_durations::load(const std::filesystem::path& results_file,
                                            std::optional<long long> batch_size) {
  if (!std::filesystem::is_regular_file(results_file))
    throw usage_error("argument --expected-times: no results file " + results_file.string());
  expected_durations durations;
  const auto lines = read_results(results_file, [&](size_t number, const std::string& error) {
    log_warning("--expected-times: ignoring corrupt line " + std::to_string(number) + " of " +
                results_file.string() + " (" + error + ")");
  });
  for (const auto& line : lines) {
    const auto key = placement_free_key_of(line.record, batch_size);
    const auto seconds = recorded_seconds(line.record);
    if (!key || !seconds) continue;
    auto& slot = durations.m_seconds[*key];
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
