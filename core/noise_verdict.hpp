// Whether one record's timings can be trusted (issue 24): its "noise" verdict from the spread of its
// counted repeats and the machine state around them (core/machine_state: the snapshots right before
// the first and right after the last timed repeat). One rule, written by the child into every
// record as {"verdict": "quiet" | "noisy" | "unknown", "reasons": [...]}:
//   noisy   — any finding below says the timings were disturbed;
//   unknown — nothing says so, but too few repeats count to judge their spread;
//   quiet   — the repeats agree and nothing disturbed them.
// The reasons list the findings behind the verdict, one line each, noisy ones first, then what
// could not be judged (a quiet record read fully has none).
#pragma once

#include "core/machine_state.hpp"
#include "core/python_json.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace benchmatrix {

/// Fewer counted repeats than this (repeat 0 is warm-up: core/repeat_statistics) give no spread to
/// judge: two values always "agree" with their own median.
inline constexpr size_t noise_minimum_counted_repeats = 3;
/// (p90 - p10) / median of the counted per_iter_time repeats above which they disagree, as a
/// fraction. A quiet GPU's repeats agree within a few percent (issue 24: each child's repeats
/// within a few percent while sweeps differed by up to 40%); 10% is well above that, and a spread
/// this wide hides the 5% differences the comparisons are meant to show.
inline constexpr double noise_maximum_repeat_spread = 0.10;
/// A fall of the SM clock between the two snapshots by more than this fraction of its start value
/// (boost clocks step by about 15 MHz, under 1% of an H100's 1980 MHz) means the GPU slowed down
/// during the repeats.
inline constexpr double noise_maximum_sm_clock_drop = 0.05;

/// The share of the host's CPU time (all CPUs, /proc/stat) stolen by the hypervisor between the two
/// snapshots above which the host was disturbed. A dedicated machine steals nothing; on a shared
/// VM steal is time the vCPUs wanted to run and could not, and a launch-bound child's host thread
/// is among them: its iterations stretch while nothing on this machine is busy. 2% of all CPUs is
/// a third of a CPU on a 16-CPU host, more than the one thread a launch-bound child runs on.
inline constexpr double noise_maximum_host_steal = 0.02;

/// A change of the host speed probe (core/machine_state host_state::speed_probe_ms) between the
/// two snapshots by more than this fraction: the host's CPU clock moved during the repeats, which
/// moves a launch-bound step with it. The probe's own run-to-run spread on a quiet core is about
/// 1-2% (fastest of five runs); 10% is well above it.
inline constexpr double noise_maximum_host_speed_change = 0.10;

struct noise_verdict {
  std::string verdict;               // "quiet", "noisy" or "unknown"
  std::vector<std::string> reasons;  // one line each
};

/// The verdict for a record whose per_iter_time repeats are `per_iter_time` (seconds, every
/// repeat, warm-up included) between the snapshots `start` and `end`. The findings:
///   - the spread of the counted repeats above noise_maximum_repeat_spread (noisy), or fewer than
///     noise_minimum_counted_repeats of them (unknown);
///   - the SM clock falling by more than noise_maximum_sm_clock_drop between start and end;
///   - at start or end, a power or thermal clock event reason active while the SM clock is below
///     its maximum (or unread);
///   - other processes computing on the GPU at start or end;
///   - the host's 1-minute load average (the higher of start and end) above its online CPUs
///     (more runnable threads than CPUs: the child's threads wait their turn);
///   - the hypervisor stealing more than noise_maximum_host_steal of the host's CPU time between
///     start and end;
///   - the host speed probe changing by more than noise_maximum_host_speed_change between start
///     and end;
///   - a GPU this process uses that could not be read, or a load that could not be read (listed,
///     not noisy by themselves).
/// A paired record (--paired-baseline) passes its baseline_per_iter_time too: its speedups are only
/// as steady as the noisier of the two sides (on a shared host a launch-bound eager baseline
/// wanders while a CUDA-graph replay stays flat), so the baseline's spread is judged the same way.
[[nodiscard]] noise_verdict judge_noise(const std::vector<double>& per_iter_time,
                                        const machine_snapshot& start,
                                        const machine_snapshot& end,
                                        const std::vector<double>* baseline_per_iter_time = nullptr);

/// {"verdict": "...", "reasons": [...]}: the record's top-level "noise".
[[nodiscard]] json_value noise_verdict_json(const noise_verdict& noise, json_allocator& a);

/// Reads a record's "noise" value back. Throws std::runtime_error naming `key` and what was expected
/// when it is not {"verdict": one of the three, "reasons": [strings]}.
[[nodiscard]] noise_verdict parse_noise_verdict(const json_value& value, const std::string& key);

}  // namespace benchmatrix
