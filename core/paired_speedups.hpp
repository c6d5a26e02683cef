// Paired measurement (issue 24, experiment_runner --paired-baseline): one child times the baseline
// backend's step and the experiment's alternately, repeat by repeat, on identical inputs, so that
// the machine's drift (clocks, other load, launch latency) hits both sides of each pair alike and
// the per-pair ratios are far steadier than a ratio of two children's medians. This is the
// torch-free half: the order the two steps run in, the per-pair speedups with their median and
// bootstrap interval (core/median_interval.hpp), and the record's top-level "paired" key:
//   "paired": {"baseline": "eager", "order": "ABBA", "speedups": [...],
//              "speedup": {"median": m, "low": l, "high": h, "confidence": 0.95, "count": n}}
#pragma once

#include "core/median_interval.hpp"
#include "core/python_json.hpp"

#include <string>
#include <vector>

namespace benchmatrix {

/// The record's "order": ABBA alternation, baseline_runs_first's rule.
inline constexpr const char* paired_order_abba = "ABBA";

/// Whether repeat `repeat_index` (0-based) times the baseline before the experiment: the baseline
/// in even repeats, the experiment in odd ones (BA AB BA AB ...), so that a drift linear in time
/// adds as much to either side over every two repeats.
[[nodiscard]] bool baseline_runs_first(int repeat_index);

/// A record's paired figures.
struct paired_speedups {
  std::string baseline;          // the baseline backend's report name: "eager", "torchscript", ...
  std::string order;             // how the repeats alternate: paired_order_abba
  std::vector<double> speedups;  // per counted pair: baseline per_iter / experiment per_iter
  median_interval speedup;       // bootstrap_median of `speedups` (count: how many pairs)
};

/// The paired figures from both sides' seconds per iteration, one value per repeat (same length).
/// Pairs count as repeats do (core/repeat_statistics.hpp: repeat 0 is the warm-up pair unless it is
/// the only one); a pair with a time that is not finite and positive does not count. Throws
/// std::invalid_argument when the lists differ in length or no pair counts.
[[nodiscard]] paired_speedups compute_paired_speedups(std::string baseline,
                                                      const std::vector<double>& baseline_per_iter,
                                                      const std::vector<double>& experiment_per_iter);

/// The record's "paired" object, keys in the order above.
[[nodiscard]] json_value paired_speedups_json(const paired_speedups& paired, json_allocator& a);

/// Reads a "paired" object. Throws std::runtime_error naming `where` and the key that does not fit
/// ("line 3: 'paired.speedup.low': expected a number"); keys it does not know are ignored.
[[nodiscard]] paired_speedups paired_speedups_from_json(const json_value& paired,
                                                        const std::string& where);

}  // namespace benchmatrix
