#include "output/aggregate_report.hpp"

#include "backends/backend_name.hpp"
#include "backends/backend_registry.hpp"
#include "core/python_json.hpp"
#include "core/results_record.hpp"
#include "output/text_cells.hpp"

#include <algorithm>
#include <iterator>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <regex>
#include <fstream>
#include <stdexcept>
#include <tuple>

namespace benchmatrix {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

/// The (model, batch size) keys of a table's cells, ordered by model name case-insensitively (as
/// str.casefold for ASCII names), batch sizes in the map's order within a model.
template <typename Cells>
std::vector<std::pair<std::string, std::string>> keys_by_model(const Cells& cells) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& [key, by_backend] : cells) keys.push_back(key);
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& x, const auto& y) { return lower(x.first) < lower(y.first); });
  return keys;
}

/// Lower-case alphanumeric words: "NVIDIA A100-SXM4-40GB" → nvidia, a100, sxm4, 40gb.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      out.push_back(word);
      word.clear();
    }
  }
  return out;
}

/// The original's names for the three GPUs it knows (clean_up_accelerator_model), else "".
std::string seed_accelerator_name(const std::string& model) {
  if (std::regex_search(model, std::regex("One of Tesla V100"))) return "v100";
  if (std::regex_search(model, std::regex("One of Quadro P1000, NVIDIA RTX A6000"))) return "a6000";
  if (std::regex_search(model, std::regex("NVIDIA A100-SXM4-40GB"))) return "a100";
  return "";
}

/// total_time's samples; nullopt when absent or null (error, SKIP and verify records, old files).
/// Throws for a value that is not a list of numbers.
std::optional<std::vector<double>> total_time_of(const results_record& record) {
  const json_value* v = record.metric("total_time");
  if (!v || v->IsNull()) return std::nullopt;
  if (!v->IsArray()) throw std::runtime_error("metrics.total_time is not a list");
  std::vector<double> samples;
  for (const auto& x : v->GetArray()) {
    if (!x.IsNumber()) throw std::runtime_error("metrics.total_time holds a non-number");
    samples.push_back(x.GetDouble());
  }
  return samples;
}

template <typename T>
T& entry(std::vector<std::pair<std::string, T>>& list, const std::string& key) {
  for (auto& [k, v] : list)
    if (k == key) return v;
  return list.emplace_back(key, T{}).second;
}

/// str() of a float as Python prints it (nan, inf, -inf; repr otherwise).
std::string python_float_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return python_float_repr(v);
}

std::string speedup_header(const std::string& title, const std::string& base, bool latest,
                           bool multiline) {
  const char* when = latest ? "Latest" : "Oldest";
  if (multiline) return "Speedup\n" + title + "\nover\n" + when + "\n" + base;
  return "Speedup(" + title + "/" + when + " " + base + ")";
}

/// Both header forms of one column.
void add_column(report_table& table, const std::string& single, const std::string& multiline) {
  table.headers.push_back(single);
  table.multiline_headers.push_back(multiline);
}

table_cell value_cell(double v) { return std::isnan(v) ? table_cell{} : table_cell{v}; }

}  // namespace

const std::vector<std::pair<std::string, std::string>>& known_backends() {
  static const std::vector<std::pair<std::string, std::string>> backends = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const backend_descriptor* backend : backend_catalog())
      out.emplace_back(backend->report_name, backend->title);
    return out;
  }();
  return backends;
}

std::vector<std::string> known_backend_names() {
  std::vector<std::string> names;
  for (const auto& [name, title] : known_backends()) names.push_back(name);
  return names;
}

std::string backend_title(const std::string& backend) {
  for (const auto& [name, title] : known_backends())
    if (name == backend) return title;
  return backend;
}

bool accelerator_matches(const std::string& wanted, const std::string& accelerator,
                         const std::string& accelerator_model) {
  const std::string want = lower(wanted);
  if (want.empty()) return false;
  if (seed_accelerator_name(accelerator_model) == want || lower(accelerator) == want) return true;
  const auto needle = words(want), haystack = words(accelerator_model);
  if (needle.empty()) return false;
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) !=
         haystack.end();
}

aggregated_results load_results(const std::vector<std::filesystem::path>& files,
                                const aggregate_options& options,
                                const std::function<void(const std::string&)>& warn,
                                std::set<std::string>* accelerators_seen,
                                std::set<std::string>* axes_seen) {
  const auto join = [](const std::vector<std::string>& patterns, const char* fallback) {
    std::string joined;
    for (const auto& p : patterns) joined += (joined.empty() ? "" : "|") + p;
    return std::regex(patterns.empty() ? fallback : joined, std::regex::ECMAScript | std::regex::icase);
  };
  std::regex filter, exclude;
  try {
    filter = join(options.filters, ".");
    exclude = join(options.excludes, "^$");
  } catch (const std::regex_error& e) {
    throw std::runtime_error(std::string("invalid --filter/--exclude regex: ") + e.what());
  }
  const std::string wanted_test = options.test == "training" ? "train" : "eval";

  aggregated_results results;
  for (const auto& file : files) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
      throw std::runtime_error("input file " + file.string() +
                               (std::filesystem::exists(file, ec) ? " is not a regular file"
                                                                  : " does not exist"));
    if (!std::ifstream(file)) throw std::runtime_error("cannot read input file " + file.string());
    const auto lines = read_records_for_report(file, warn);
    for (const auto& line : lines) {
      const std::string where = file.string() + ":" + std::to_string(line.line_number);
      const results_record& r = line.record;
      const auto& id = r.identity;
      // The fields the original requires of every line (model.model_name and experiment.test the
      // reader requires itself).
      static const char* const required[] = {"experiment.accelerator_model", "experiment.batch_size",
                                             "experiment.dynamo", "experiment.xla", "metrics",
                                             "timestamp"};
      const auto missing = std::find_if(std::begin(required), std::end(required),
                                        [&](const char* key) { return !r.has(key); });
      if (missing != std::end(required)) {
        warn(where + ": skipped: the record has no " + *missing);
        continue;
      }
      try {
        if (accelerators_seen) accelerators_seen->insert(id.accelerator_model);
        if (axes_seen)
          axes_seen->insert("--precision " + id.experiment.precision + " --inductor-mode " +
                            id.experiment.inductor_mode);
        if (!accelerator_matches(options.accelerator, id.experiment.accelerator, id.accelerator_model))
          continue;
        const std::string& model = id.model_name;
        if (!std::regex_search(model, filter) || std::regex_search(model, exclude)) continue;
        if (id.experiment.test != wanted_test) continue;
        if (id.experiment.precision != options.precision) continue;
        if (id.experiment.inductor_mode != options.inductor_mode) continue;
        const std::string backend =
            report_backend_name(id.experiment.dynamo, id.experiment.xla, id.experiment.torch_xla2);
        const auto samples = total_time_of(r);
        if (!samples) continue;
        const size_t first_used = options.compile_metric ? 0 : options.skip_samples;
        for (size_t i = first_used; i < samples->size(); ++i)
          if (!std::isfinite((*samples)[i]))
            throw std::runtime_error("metrics.total_time holds " + python_float_repr((*samples)[i]));
        const std::string batch = id.batch_size ? std::to_string(*id.batch_size) : "None";
        results[id.timestamp].timings[backend][{model, batch}] = {
            r.per_iter_seconds(), paired_of(r), peak_memory_of(r)};
        const auto point = options.compile_metric ? compile_datapoint(*samples)
                                                  : exec_datapoint(*samples, options.skip_samples);
        if (!point) continue;
        auto& models = results[id.timestamp].measured[backend];
        entry(entry(models, model), id.batch_size ? std::to_string(*id.batch_size) : "None") = *point;
      } catch (const std::exception& e) {
        warn(where + ": skipped: " + e.what());
      }
    }
  }
  return results;
}

void compute_speedups(aggregated_results& results, const aggregate_options& options) {
  if (results.empty()) return;
  const std::string& base = options.backends.front();
  std::map<std::string, std::map<std::string, datapoint>> baseline;  // model → batch size → value
  const auto populate = [&](const model_datapoints& models) {
    for (const auto& [model, batches] : models)
      for (const auto& [batch, point] : batches) baseline[model].emplace(batch, point);
  };
  if (options.baseline_latest) {
    const auto& [timestamp, latest] = *results.rbegin();
    const auto it = latest.measured.find(base);
    if (it == latest.measured.end())
      throw std::runtime_error("No " + base + " results in the latest timestamp " +
                               python_float_repr(timestamp) + " (" +
                               python_utc_datetime(timestamp) +
                               " UTC); use --baseline oldest or results holding " + base);
    populate(it->second);
  } else {
    for (const auto& [timestamp, at] : results)
      if (const auto it = at.measured.find(base); it != at.measured.end()) populate(it->second);
  }
  for (auto& [timestamp, at] : results) {
    for (const auto& [backend, models] : at.measured) {
      backend_speedups speedups;
      for (const auto& [model, batches] : models) {
        const auto base_model = baseline.find(model);
        if (base_model == baseline.end()) continue;
        std::vector<datapoint> per_batch;  // several batch sizes: the geomean of their speedups
        for (const auto& [batch, point] : batches)
          if (const auto b = base_model->second.find(batch); b != base_model->second.end())
            per_batch.push_back(speedup_of(point, b->second));
        if (!per_batch.empty()) speedups.per_model.emplace_back(model, geomean_of(per_batch));
      }
      if (speedups.per_model.empty()) continue;
      std::vector<datapoint> values;
      std::vector<double> averages;
      for (const auto& [model, point] : speedups.per_model) {
        values.push_back(point);
        averages.push_back(point.avg);
      }
      speedups.geomean = geomean_of(values);
      speedups.p5 = percentile_of(averages, 5);
      speedups.p50 = percentile_of(averages, 50);
      speedups.p95 = percentile_of(averages, 95);
      at.speedups[backend] = std::move(speedups);
    }
  }
}

namespace {

/// What every kind of report starts from: the baseline backend's title, which run is the
/// baseline, and the caller's extra title line.
struct report_start {
  const aggregate_options& options;
  std::string base_title;   // the first backend's title: the speedups' baseline
  bool latest_base;         // the baseline is each backend's latest run (else its oldest)
  std::string over;         // "Latest|Oldest Benchmarked <base>", for the titles
  std::string extra_title;  // a second title line when not empty

  /// An empty table titled `text` (and the extra title under it).
  report_table titled(const std::string& text) const {
    report_table table;
    table.title = extra_title.empty() ? text : text + "\n" + extra_title;
    return table;
  }
  /// `backend`'s speedup column (single-line and multi-line headers) and its StdDev.
  void add_speedup_columns(report_table& table, const std::string& backend) const {
    const std::string t = backend_title(backend);
    add_column(table, speedup_header(t, base_title, latest_base, false),
               speedup_header(t, base_title, latest_base, true));
    add_column(table, "StdDev", "StdDev");
  }
};

/// A datapoint's average and spread as the original's pr_round of numpy floats rounds them.
std::pair<double, double> rounded(const datapoint& p) {
  return std::make_pair(numpy_round(p.avg, 8), numpy_round(p.std, 8));
}

/// One row per run (timestamp): each backend's geomean speedup over the baseline and its spread.
report_table speedup_report(const aggregated_results& results,
                            const report_start& start) {
  auto table = start.titled("Speedup over " + start.over);
  add_column(table, "Datetime(UTC)", "Datetime(UTC)");
  for (const auto& b : start.options.backends) start.add_speedup_columns(table, b);
  for (const auto& [timestamp, at] : results) {
    std::vector<table_cell> row = {python_utc_datetime(timestamp)};
    bool any = false;
    for (const auto& b : start.options.backends) {
      const auto it = at.speedups.find(b);
      if (it == at.speedups.end()) {
        row.insert(row.end(), {table_cell{}, table_cell{}});
        continue;
      }
      any = true;
      const auto [avg, std] = rounded(it->second.geomean);
      row.insert(row.end(), {value_cell(avg), value_cell(std)});
    }
    if (!any) continue;
    table.rows.push_back(std::move(row));
    table.row_timestamps.push_back(timestamp);
  }
  return table;
}

/// The latest run of each backend: its per-model speedups sorted ascending, one column group per
/// backend (rows are ranks, not models).
std::optional<report_table> latest_report(const aggregated_results& results,
                                          const report_start& start) {
  auto table = start.titled("Speedup over " + start.over);
  std::vector<std::vector<std::pair<datapoint, std::string>>> sorted;
  for (const auto& b : start.options.backends) {
    sorted.emplace_back();
    for (auto it = results.rbegin(); it != results.rend(); ++it) {
      const auto s = it->second.speedups.find(b);
      if (s == it->second.speedups.end()) continue;
      for (const auto& [model, point] : s->second.per_model) sorted.back().emplace_back(point, model);
      std::sort(sorted.back().begin(), sorted.back().end(), [](const auto& x, const auto& y) {
        return std::tie(x.first.avg, x.first.std, x.second) <
               std::tie(y.first.avg, y.first.std, y.second);
      });
      break;
    }
  }
  size_t rows = 0;
  for (const auto& s : sorted) rows = std::max(rows, s.size());
  if (rows == 0) return std::nullopt;
  add_column(table, "Workload", "Workload");
  for (const auto& b : start.options.backends) {
    start.add_speedup_columns(table, b);
    add_column(table, "ModelName(" + backend_title(b) + ")", "ModelName\n" + backend_title(b));
  }
  for (size_t j = 0; j < rows; ++j) {
    std::vector<table_cell> row = {static_cast<long long>(j)};
    for (const auto& s : sorted) {
      if (j >= s.size()) {
        row.insert(row.end(), {table_cell{}, table_cell{}, table_cell{}});
        continue;
      }
      const auto [avg, std] = rounded(s[j].first);
      row.insert(row.end(), {value_cell(avg), value_cell(std), s[j].second});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

/// The latest run: one row per model (case-insensitive order), each backend's speedup, then GEOMEAN.
std::optional<report_table> latest_grouped_report(const aggregated_results& results,
                                                  const report_start& start) {
  auto table = start.titled("Speedup over " + start.over);
  if (results.empty()) return std::nullopt;
  const timestamp_results& at = results.rbegin()->second;
  std::vector<std::pair<std::string, std::map<std::string, datapoint>>> per_model;
  for (const auto& b : start.options.backends)
    if (const auto s = at.speedups.find(b); s != at.speedups.end())
      for (const auto& [model, point] : s->second.per_model) entry(per_model, model)[b] = point;
  if (per_model.empty()) return std::nullopt;
  std::stable_sort(per_model.begin(), per_model.end(), [](const auto& x, const auto& y) {
    return lower(x.first) < lower(y.first);  // str.casefold for ASCII names
  });
  add_column(table, "ModelName", "ModelName");
  for (const auto& b : start.options.backends) start.add_speedup_columns(table, b);
  for (const auto& [model, points] : per_model) {
    std::vector<table_cell> row = {model};
    for (const auto& b : start.options.backends) {
      const auto p = points.find(b);
      if (p == points.end()) {
        row.insert(row.end(), {table_cell{}, table_cell{}});
        continue;
      }
      const auto [avg, std] = rounded(p->second);
      row.insert(row.end(), {value_cell(avg), value_cell(std)});
    }
    table.rows.push_back(std::move(row));
  }
  std::vector<table_cell> geomean = {std::string("GEOMEAN")};
  for (const auto& b : start.options.backends) {
    const auto s = at.speedups.find(b);
    if (s == at.speedups.end()) {
      geomean.insert(geomean.end(), {table_cell{}, table_cell{}});
      continue;
    }
    const auto [avg, std] = rounded(s->second.geomean);
    geomean.insert(geomean.end(), {value_cell(avg), value_cell(std)});
  }
  table.rows.push_back(std::move(geomean));
  return table;
}

/// The latest run: per model and batch size each backend's median speedup over the first with its
/// 95% interval, the kind (paired or not) and the verdict; then GEOMEAN and the verdicts counted.
std::optional<report_table> latest_intervals_report(const aggregated_results& results,
                                                    const report_start& start) {
  if (results.empty()) return std::nullopt;
  const std::string& base = start.options.backends.front();
  auto table =
      start.titled("Speedup over " + start.base_title + " (latest, median and 95% interval)");
  const timestamp_results& at = results.rbegin()->second;
  const auto base_timings = at.timings.find(base);
  std::vector<std::string> others(start.options.backends.begin() + 1, start.options.backends.end());
  // (model, batch) → backend → speedup, rows in case-insensitive model order
  std::map<std::pair<std::string, std::string>, std::map<std::string, speedup_figure>> cells;
  for (const auto& b : others) {
    const auto timings = at.timings.find(b);
    if (timings == at.timings.end()) continue;
    for (const auto& [key, timing] : timings->second) {
      std::optional<speedup_figure> figure;
      if (timing.paired && timing.paired->baseline == base)
        figure = speedup_figure{timing.paired->speedup, speedup_kind::paired};
      else if (base_timings != at.timings.end())
        if (const auto b_timing = base_timings->second.find(key);
            b_timing != base_timings->second.end())
          figure = unpaired_speedup(b_timing->second.per_iter_s, timing.per_iter_s);
      if (figure && figure->interval.median > 0) cells[key][b] = *figure;
    }
  }
  if (cells.empty()) return std::nullopt;
  const auto keys = keys_by_model(cells);
  add_column(table, "ModelName", "ModelName");
  add_column(table, "BatchSize", "BatchSize");
  for (const auto& b : others) {
    const std::string t = backend_title(b);
    add_column(table, t + " speedup", t + "\nspeedup");
    add_column(table, t + " 95% low", t + "\n95% low");
    add_column(table, t + " 95% high", t + "\n95% high");
    add_column(table, t + " kind", t + "\nkind");
    add_column(table, t + " verdict", t + "\nverdict");
  }
  std::map<std::string, std::vector<datapoint>> medians;  // backend → per-row medians
  std::map<std::string, std::map<speedup_verdict, size_t>> verdicts;
  for (const auto& key : keys) {
    std::vector<table_cell> row = {key.first, key.second};
    for (const auto& b : others) {
      const auto it = cells[key].find(b);
      if (it == cells[key].end()) {
        row.insert(row.end(), 5, table_cell{});
        continue;
      }
      const auto& i = it->second.interval;
      const auto verdict = verdict_of(i);
      medians[b].push_back({i.median, 0});
      ++verdicts[b][verdict];
      row.insert(row.end(), {value_cell(numpy_round(i.median, 8)), value_cell(numpy_round(i.low, 8)),
                             value_cell(numpy_round(i.high, 8)),
                             std::string(speedup_kind_name(it->second.kind)),
                             std::string(speedup_verdict_name(verdict))});
    }
    table.rows.push_back(std::move(row));
  }
  std::vector<table_cell> geomean = {std::string("GEOMEAN"), table_cell{}};
  for (const auto& b : others) {
    if (!medians.count(b)) {
      geomean.insert(geomean.end(), 5, table_cell{});
      continue;
    }
    auto& v = verdicts[b];
    geomean.insert(geomean.end(),
                   {value_cell(numpy_round(geomean_of(medians[b]).avg, 8)), table_cell{},
                    table_cell{}, std::string("no interval"),
                    std::to_string(v[speedup_verdict::faster]) + " faster, " +
                        std::to_string(v[speedup_verdict::slower]) + " slower, " +
                        std::to_string(v[speedup_verdict::within_noise]) + " within noise"});
  }
  table.rows.push_back(std::move(geomean));
  return table;
}

/// The latest run: per model and batch size the baseline's peak memory over each backend's, flagged
/// below low_compression_ratio; then GEOMEAN and how many rows are flagged.
std::optional<report_table> memory_compression_report(const aggregated_results& results,
                                                      const report_start& start) {
  if (results.empty()) return std::nullopt;
  const std::string& base = start.options.backends.front();
  auto table = start.titled("Memory compression ratio: " + start.base_title +
                            " peak / backend peak (latest)");
  const timestamp_results& at = results.rbegin()->second;
  const auto base_timings = at.timings.find(base);
  if (base_timings == at.timings.end()) return std::nullopt;
  std::vector<std::string> others(start.options.backends.begin() + 1, start.options.backends.end());
  std::map<std::pair<std::string, std::string>, std::map<std::string, double>> cells;
  for (const auto& b : others) {
    const auto timings = at.timings.find(b);
    if (timings == at.timings.end()) continue;
    for (const auto& [key, timing] : timings->second) {
      const auto base_timing = base_timings->second.find(key);
      if (!timing.peak_memory || base_timing == base_timings->second.end() ||
          !base_timing->second.peak_memory)
        continue;
      if (const auto ratio = compression_ratio(*base_timing->second.peak_memory,
                                               *timing.peak_memory))
        cells[key][b] = *ratio;
    }
  }
  if (cells.empty()) return std::nullopt;
  const auto keys = keys_by_model(cells);
  add_column(table, "ModelName", "ModelName");
  add_column(table, "BatchSize", "BatchSize");
  for (const auto& b : others) {
    const std::string t = backend_title(b);
    add_column(table, t + " compression", t + "\ncompression");
    add_column(table, t + " flag", t + "\nflag");
  }
  const std::string below = "below " + python_float_repr(low_compression_ratio);
  std::map<std::string, std::vector<datapoint>> ratios;  // backend → per-row ratios
  for (const auto& key : keys) {
    std::vector<table_cell> row = {key.first, key.second};
    for (const auto& b : others) {
      const auto it = cells[key].find(b);
      if (it == cells[key].end()) {
        row.insert(row.end(), 2, table_cell{});
        continue;
      }
      ratios[b].push_back({it->second, 0});
      row.insert(row.end(), {value_cell(numpy_round(it->second, 8)),
                             it->second < low_compression_ratio ? table_cell{below}
                                                                : table_cell{}});
    }
    table.rows.push_back(std::move(row));
  }
  std::vector<table_cell> geomean = {std::string("GEOMEAN"), table_cell{}};
  for (const auto& b : others) {
    if (!ratios.count(b)) {
      geomean.insert(geomean.end(), 2, table_cell{});
      continue;
    }
    const auto low = std::count_if(ratios[b].begin(), ratios[b].end(), [](const datapoint& p) {
      return p.avg < low_compression_ratio;
    });
    const double g = geomean_of(ratios[b]).avg;
    geomean.insert(geomean.end(),
                   {value_cell(numpy_round(g, 8)),
                    std::string(g < low_compression_ratio ? below + "; " : "") +
                        std::to_string(low) + " of " + std::to_string(ratios[b].size()) +
                        " rows " + below});
  }
  table.rows.push_back(std::move(geomean));
  return table;
}

/// One row per run where the baseline has data: each backend's 95th, 50th and 5th percentile speedup.
report_table histogram_report(const aggregated_results& results,
                              const report_start& start) {
  auto table = start.titled("Histogram of Speedup over " + start.over);
  add_column(table, "Datetime(UTC)", "Datetime(UTC)");
  for (const auto& b : start.options.backends)
    for (const char* p : {"p95", "p50", "p5"})
      add_column(table, backend_title(b) + " " + p, backend_title(b) + "\n" + p);
  for (const auto& [timestamp, at] : results) {
    if (!at.speedups.count(start.options.backends.front())) continue;  // rows where the baseline has data
    std::vector<table_cell> row = {python_utc_datetime(timestamp)};
    for (const auto& b : start.options.backends) {
      const auto s = at.speedups.find(b);
      if (s == at.speedups.end()) {
        row.insert(row.end(), {table_cell{}, table_cell{}, table_cell{}});
        continue;
      }
      for (double v : {s->second.p95, s->second.p50, s->second.p5})
        row.push_back(value_cell(python_round(v, 8)));  // Python floats there: Python's round
    }
    table.rows.push_back(std::move(row));
    table.row_timestamps.push_back(timestamp);
  }
  return table;
}

}  // namespace

std::optional<report_table> make_report(const aggregated_results& results,
                                        const aggregate_options& options, report_kind kind,
                                        const std::string& extra_title) {
  const bool latest_base = options.baseline_latest;
  const std::string base_title = backend_title(options.backends.front());
  const report_start start{options, base_title, latest_base,
                           std::string(latest_base ? "Latest" : "Oldest") + " Benchmarked " + base_title,
                           extra_title};
  switch (kind) {
  case report_kind::speedup: return speedup_report(results, start);
  case report_kind::latest: return latest_report(results, start);
  case report_kind::latest_grouped: return latest_grouped_report(results, start);
  case report_kind::latest_intervals: return latest_intervals_report(results, start);
  case report_kind::memory_compression: return memory_compression_report(results, start);
  case report_kind::histogram: return histogram_report(results, start);
  }
  return std::nullopt;
}

std::string report_svg(const report_table& table, const aggregate_options& options,
                       report_kind kind, const chart_size& size) {
  static const svg::marker_shape markers[] = {svg::marker_shape::diamond, svg::marker_shape::circle,
                                              svg::marker_shape::square, svg::marker_shape::triangle,
                                              svg::marker_shape::cross, svg::marker_shape::plus};
  static const svg::line_dash dashes[] = {svg::line_dash::solid, svg::line_dash::dotted,
                                          svg::line_dash::dashed, svg::line_dash::dash_dot};
  const auto number = [](const table_cell& c) {
    if (const double* d = std::get_if<double>(&c)) return *d;
    return svg::no_value;
  };
  svg::chart_frame frame;
  frame.title = table.title;
  frame.width_in = size.width_in;
  frame.height_in = size.height_in;
  const size_t n = options.backends.size();
  // The per-workload bar charts' common part: one category per row (its model, and its batch
  // size where the table's second column holds one), a reference line at 1.
  const auto workload_bars = [&](const char* x_label, bool with_batch_size) {
    svg::bar_chart chart;
    frame.x_label = x_label;
    frame.y_label = "Workload";
    chart.frame = frame;
    chart.reference_x = 1.0;
    for (const auto& row : table.rows)
      chart.categories.push_back(std::get<std::string>(row[0]) +
                                 (with_batch_size && std::holds_alternative<std::string>(row[1])
                                      ? " (" + std::get<std::string>(row[1]) + ")"
                                      : ""));
    return chart;
  };
  if (kind == report_kind::latest_intervals) {  // bars at the medians, the intervals as error bars
    svg::bar_chart chart = workload_bars("Speedup (median, 95% interval)", true);
    for (size_t b = 1; b < n; ++b) {
      svg::bar_series s{backend_title(options.backends[b]), {}, {}};
      const size_t first = 2 + 5 * (b - 1);
      for (const auto& row : table.rows) {
        s.values.push_back(number(row[first]));
        s.lows.push_back(number(row[first + 1]));
        s.highs.push_back(number(row[first + 2]));
      }
      chart.series.push_back(std::move(s));
    }
    return svg::render_bar_chart(chart);
  }
  if (kind == report_kind::memory_compression) {  // bars at the ratios, a line at 0.9 and 1
    svg::bar_chart chart =
        workload_bars("Compression ratio (baseline peak / backend peak)", true);
    for (size_t b = 1; b < n; ++b) {
      svg::bar_series s{backend_title(options.backends[b]), {}, {}};
      for (const auto& row : table.rows) s.values.push_back(number(row[2 + 2 * (b - 1)]));
      chart.series.push_back(std::move(s));
    }
    return svg::render_bar_chart(chart);
  }
  if (kind == report_kind::latest_grouped) {
    svg::bar_chart chart = workload_bars("Speedup", false);
    for (size_t b = 0; b < n; ++b) {
      svg::bar_series s{backend_title(options.backends[b]), {}, {}};
      for (const auto& row : table.rows) {
        s.values.push_back(number(row[1 + 2 * b]));
        s.errors.push_back(number(row[2 + 2 * b]));
      }
      chart.series.push_back(std::move(s));
    }
    return svg::render_bar_chart(chart);
  }
  svg::line_chart chart;
  chart.reference_y = 1.0;
  if (kind == report_kind::latest) {
    frame.x_label = "Workload Number";
    frame.y_label = "Speedup";
    for (size_t b = 0; b < n; ++b) {
      svg::line_series s{backend_title(options.backends[b]), {}, svg::line_dash::solid,
                         markers[b % 6], true};
      for (size_t j = 0; j < table.rows.size(); ++j) {
        const auto& row = table.rows[j];
        if (!std::holds_alternative<std::string>(row[3 + 3 * b])) continue;
        s.points.push_back({static_cast<double>(j), number(row[1 + 3 * b]), number(row[2 + 3 * b]),
                            std::get<std::string>(row[3 + 3 * b])});
      }
      chart.series.push_back(std::move(s));
    }
  } else {
    frame.x_label = "Date";
    frame.y_label = "Geomean Speedup";
    chart.x_axis = svg::x_axis_kind::utc_dates;
    for (size_t b = 0; b < n; ++b) {
      const std::string t = backend_title(options.backends[b]);
      if (kind == report_kind::speedup) {
        svg::line_series s{t, {}, svg::line_dash::solid, markers[b % 6], false};
        for (size_t j = 0; j < table.rows.size(); ++j)
          s.points.push_back({table.row_timestamps[j], number(table.rows[j][1 + 2 * b]),
                              number(table.rows[j][2 + 2 * b]), ""});
        chart.series.push_back(std::move(s));
      } else {
        const char* names[] = {"p95", "p50", "p5"};
        for (size_t k = 0; k < 3; ++k) {
          svg::line_series s{t + " " + names[k], {}, dashes[b % 4], markers[b % 6], false};
          for (size_t j = 0; j < table.rows.size(); ++j)
            s.points.push_back({table.row_timestamps[j], number(table.rows[j][1 + 3 * b + k]),
                                svg::no_value, ""});
          chart.series.push_back(std::move(s));
        }
      }
    }
  }
  chart.frame = frame;
  return svg::render_line_chart(chart);
}

// --- text renderings ----------------------------------------------------------------------------

namespace {

std::string csv_text(const table_cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) return "";
  if (const long long* i = std::get_if<long long>(&cell)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&cell)) return python_float_str(*d);
  return csv_quoted(std::get<std::string>(cell));
}

/// The human formats' text of a cell: floats with 2 decimals (tabulate's floatfmt=".2f").
std::string display_text(const table_cell& cell) {
  if (const double* d = std::get_if<double>(&cell)) {
    if (!std::isfinite(*d)) return python_float_str(*d);
    char text[64];
    std::snprintf(text, sizeof text, "%.2f", *d);
    return text;
  }
  if (const std::string* s = std::get_if<std::string>(&cell)) return *s;
  return csv_text(cell);
}

bool numeric_column(const report_table& table, size_t column) {
  for (const auto& row : table.rows)
    if (std::holds_alternative<std::string>(row[column])) return false;
  return true;
}

std::string repeat(const std::string& piece, size_t times) {
  std::string out;
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  lines.push_back(text.substr(start));
  return lines;
}

std::string html_escape(const std::string& text) { return svg::escape_xml(text); }

}  // namespace

std::string table_csv(const report_table& table) {
  std::string out;
  for (size_t i = 0; i < table.headers.size(); ++i)
    out += (i ? "," : "# ") + table.headers[i];
  out += "\n";
  for (const auto& row : table.rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) out += ',';
      out += csv_text(row[i]);
    }
    out += "\n";
  }
  return out;
}

std::string table_tab(const report_table& table) {
  const size_t columns = table.multiline_headers.size();
  std::vector<std::vector<std::string>> header_lines;
  std::vector<size_t> widths(columns, 0);
  std::vector<bool> right(columns);
  size_t header_height = 1;
  for (size_t c = 0; c < columns; ++c) {
    header_lines.push_back(split_lines(table.multiline_headers[c]));
    header_height = std::max(header_height, header_lines[c].size());
    for (const auto& l : header_lines[c]) widths[c] = std::max(widths[c], display_width(l));
    for (const auto& row : table.rows) widths[c] = std::max(widths[c], display_width(display_text(row[c])));
    right[c] = numeric_column(table, c);
  }
  const auto rule = [&](const char* l, const char* fill, const char* mid, const char* r) {
    std::string line = l;
    for (size_t c = 0; c < columns; ++c) line += repeat(fill, widths[c] + 2) + (c + 1 < columns ? mid : r);
    return line + "\n";
  };
  std::string out = rule("╒", "═", "╤", "╕");
  for (size_t k = 0; k < header_height; ++k) {
    out += "│";
    for (size_t c = 0; c < columns; ++c)
      out += ' ' + pad(k < header_lines[c].size() ? header_lines[c][k] : "", widths[c], right[c]) + " │";
    out += "\n";
  }
  out += rule("╞", "═", "╪", "╡");
  for (size_t r = 0; r < table.rows.size(); ++r) {
    out += "│";
    for (size_t c = 0; c < columns; ++c)
      out += ' ' + pad(display_text(table.rows[r][c]), widths[c], right[c]) + " │";
    out += "\n";
    out += r + 1 < table.rows.size() ? rule("├", "─", "┼", "┤") : rule("╘", "═", "╧", "╛");
  }
  if (table.rows.empty()) out += rule("╘", "═", "╧", "╛");
  return out;
}

std::string table_markdown(const report_table& table) {
  const size_t columns = table.headers.size();
  const auto cell_text = [](const std::string& text) {
    std::string out;
    for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::vector<size_t> widths(columns, 3);
  std::vector<bool> right(columns);
  for (size_t c = 0; c < columns; ++c) {
    widths[c] = std::max(widths[c], display_width(cell_text(table.headers[c])));
    for (const auto& row : table.rows)
      widths[c] = std::max(widths[c], display_width(cell_text(display_text(row[c]))));
    right[c] = numeric_column(table, c);
  }
  std::string out = "|";
  for (size_t c = 0; c < columns; ++c) out += " " + pad(cell_text(table.headers[c]), widths[c], right[c]) + " |";
  out += "\n|";
  for (size_t c = 0; c < columns; ++c)
    out += right[c] ? std::string(widths[c] + 1, '-') + ":|" : ":" + std::string(widths[c] + 1, '-') + "|";
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (size_t c = 0; c < columns; ++c)
      out += ' ' + pad(cell_text(display_text(row[c])), widths[c], right[c]) + " |";
    out += "\n";
  }
  return out;
}

std::string report_html(const report_table& table, const std::string& svg) {
  std::string chart = svg;
  if (chart.rfind("<?xml", 0) == 0) chart = chart.substr(chart.find('\n') + 1);  // not in HTML
  const auto lines = split_lines(table.title);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>" +
      html_escape(lines.front()) +
      "</title>\n<style>\nbody { font-family: sans-serif; margin: 2em; }\n"
      "table { border-collapse: collapse; margin-top: 1.5em; }\n"
      "th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }\n"
      "th { background: #f3f3f3; }\ntd.num { text-align: right; font-variant-numeric: tabular-nums; }\n"
      "</style>\n</head>\n<body>\n";
  for (size_t i = 0; i < lines.size(); ++i)
    out += (i == 0 ? "<h1>" : "<p>") + html_escape(lines[i]) + (i == 0 ? "</h1>\n" : "</p>\n");
  out += "<figure>\n" + chart + "</figure>\n<table>\n<thead>\n<tr>";
  for (const auto& h : table.headers) out += "<th>" + html_escape(h) + "</th>";
  out += "</tr>\n</thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (const auto& cell : row) {
      const bool number = std::holds_alternative<double>(cell) || std::holds_alternative<long long>(cell);
      out += number ? "<td class=\"num\" title=\"" + html_escape(csv_text(cell)) + "\">" : "<td>";
      out += html_escape(display_text(cell)) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n</body>\n</html>\n";
}

std::string python_utc_datetime(double timestamp) {
  // datetime.utcfromtimestamp: microseconds rounded half to even, carried into the seconds
  double whole = 0;
  double fraction = std::modf(timestamp, &whole) * 1e6;
  double micros = std::round(fraction);
  if (std::fabs(fraction - micros) == 0.5) micros = 2.0 * std::round(fraction / 2.0);
  if (micros >= 1e6) micros -= 1e6, whole += 1;
  if (micros < 0) micros += 1e6, whole -= 1;
  const auto seconds = static_cast<std::time_t>(whole);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  std::string out = text;
  if (micros != 0) {
    std::snprintf(text, sizeof text, ".%06d", static_cast<int>(micros));
    out += text;
  }
  return out;
}

}  // namespace benchmatrix
