#include "core/paired_speedups.hpp"

#include "core/repeat_statistics.hpp"

#include <cmath>
#include <stdexcept>

namespace benchmatrix {

bool baseline_runs_first(int repeat_index) { return repeat_index % 2 == 0; }

paired_speedups compute_paired_speedups(std::string baseline,
                                        const std::vector<double>& baseline_per_iter,
                                        const std::vector<double>& experiment_per_iter) {
  if (baseline_per_iter.size() != experiment_per_iter.size())
    throw std::invalid_argument("paired timings: " + std::to_string(baseline_per_iter.size()) +
                                " baseline repeats but " +
                                std::to_string(experiment_per_iter.size()) + " experiment repeats");
  paired_speedups paired;
  paired.baseline = std::move(baseline);
  paired.order = paired_order_abba;
  const auto usable = [](double seconds) { return std::isfinite(seconds) && seconds > 0; };
  for (size_t r = first_counted_repeat(baseline_per_iter.size()); r < baseline_per_iter.size(); ++r)
    if (usable(baseline_per_iter[r]) && usable(experiment_per_iter[r]))
      paired.speedups.push_back(baseline_per_iter[r] / experiment_per_iter[r]);
  const auto interval = bootstrap_median(paired.speedups);
  if (!interval)
    throw std::invalid_argument("paired timings: no pair of repeats with finite positive times");
  paired.speedup = *interval;
  return paired;
}

json_value paired_speedups_json(const paired_speedups& paired, json_allocator& a) {
  json_value object(rapidjson::kObjectType);
  object.AddMember("baseline", json_value(paired.baseline.c_str(), a), a);
  object.AddMember("order", json_value(paired.order.c_str(), a), a);
  json_value speedups(rapidjson::kArrayType);
  for (double s : paired.speedups) speedups.PushBack(s, a);
  object.AddMember("speedups", speedups, a);
  json_value speedup(rapidjson::kObjectType);
  speedup.AddMember("median", paired.speedup.median, a);
  speedup.AddMember("low", paired.speedup.low, a);
  speedup.AddMember("high", paired.speedup.high, a);
  speedup.AddMember("confidence", paired.speedup.confidence, a);
  speedup.AddMember("count", static_cast<uint64_t>(paired.speedup.count), a);
  object.AddMember("speedup", speedup, a);
  return object;
}

namespace {

const json_value& member(const json_value& object, const char* key, const std::string& name,
                         const std::string& where) {
  const auto it = object.FindMember(key);
  if (it == object.MemberEnd())
    throw std::runtime_error(where + ": '" + name + "': missing (a paired record has it)");
  return it->value;
}

[[noreturn]] void fail(const std::string& where, const std::string& name, const char* expected,
                       const json_value& found) {
  throw std::runtime_error(where + ": '" + name + "': expected " + expected + ", found " +
                           to_python_json(found));
}

}  // namespace

paired_speedups paired_speedups_from_json(const json_value& object, const std::string& where) {
  if (!object.IsObject()) fail(where, "paired", "an object", object);
  paired_speedups paired;
  for (auto [key, field] : {std::pair{"baseline", &paired_speedups::baseline},
                            std::pair{"order", &paired_speedups::order}}) {
    const json_value& v = member(object, key, std::string("paired.") + key, where);
    if (!v.IsString()) fail(where, std::string("paired.") + key, "a string", v);
    paired.*field = std::string(v.GetString(), v.GetStringLength());
  }
  const json_value& speedups = member(object, "speedups", "paired.speedups", where);
  if (!speedups.IsArray()) fail(where, "paired.speedups", "a list of numbers", speedups);
  for (const auto& s : speedups.GetArray()) {
    if (!s.IsNumber()) fail(where, "paired.speedups", "a list of numbers", speedups);
    paired.speedups.push_back(s.GetDouble());
  }
  const json_value& speedup = member(object, "speedup", "paired.speedup", where);
  if (!speedup.IsObject()) fail(where, "paired.speedup", "an object", speedup);
  for (auto [key, field] : {std::pair{"median", &median_interval::median},
                            std::pair{"low", &median_interval::low},
                            std::pair{"high", &median_interval::high},
                            std::pair{"confidence", &median_interval::confidence}}) {
    const std::string name = std::string("paired.speedup.") + key;
    const json_value& v = member(speedup, key, name, where);
    if (!v.IsNumber()) fail(where, name, "a number", v);
    paired.speedup.*field = v.GetDouble();
  }
  const json_value& count = member(speedup, "count", "paired.speedup.count", where);
  if (!count.IsUint64()) fail(where, "paired.speedup.count", "a non-negative integer", count);
  paired.speedup.count = count.GetUint64();
  return paired;
}

}  // namespace benchmatrix
