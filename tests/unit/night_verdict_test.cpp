// The regression gate's verdict (output/night_verdict): judged against the noise between nights,
// quiet on noise that history has seen, loud on a change beyond it, honest when it cannot tell.
#include "output/night_verdict.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace benchmatrix;

namespace {

/// A night that ran with a per-iteration median of `median` seconds and the interval around it.
night_state timed(double median, double low_factor = 0.98, double high_factor = 1.02,
                  const std::string& code = "PASS") {
  night_state s;
  timing_figure f;
  f.interval.median = median;
  f.interval.low = median * low_factor;
  f.interval.high = median * high_factor;
  f.interval.count = 7;
  s.timing = f;
  s.verification_code = code;
  return s;
}

std::vector<night_state> nights(std::initializer_list<double> medians) {
  std::vector<night_state> out;
  for (const double m : medians)
    out.push_back(timed(m));
  return out;
}

} // namespace

TEST_CASE("scaled_mad is 1.4826 x the median absolute deviation and ignores one wild value") {
  CHECK(scaled_mad({1, 2, 3, 4, 5}) == doctest::Approx(1.4826));
  CHECK(scaled_mad({1, 1, 1, 1, 100}) == 0);
  CHECK(scaled_mad({}) == 0);
}

TEST_CASE("within the nights' noise: SAME; beyond it with the whole interval: SLOWER / FASTER") {
  const gate_options o;
  const auto history = nights({0.100, 0.104, 0.097, 0.101, 0.099, 0.103, 0.098});
  const auto same = judge_config(timed(0.104), history, o);
  CHECK(same.result == gate_verdict::same);
  REQUIRE(same.timing);
  CHECK(same.timing->against == "history");
  CHECK(same.timing->nights == 7);
  CHECK(same.timing->center == doctest::Approx(0.100));
  const auto slower = judge_config(timed(0.150), history, o);
  CHECK(slower.result == gate_verdict::slower);
  CHECK(slower.timing->ratio == doctest::Approx(1.5));
  CHECK(is_regression(slower.result));
  CHECK(judge_config(timed(0.060), history, o).result == gate_verdict::faster);
  // A median beyond the line whose interval reaches back inside it is not called.
  CHECK(judge_config(timed(0.150, 0.6, 1.1), history, o).result == gate_verdict::same);
}

TEST_CASE("a noisy history widens what counts; one wild night does not") {
  const gate_options o;
  // Nights spread about 12% (sigma): 1.3x is within 3 sigma, 1.6x is not.
  const auto noisy = nights({0.100, 0.110, 0.092, 0.106, 0.095, 0.112, 0.090});
  const auto within = judge_config(timed(0.130), noisy, o);
  CHECK(within.result == gate_verdict::same);
  CHECK(*within.timing->spread == doctest::Approx(0.12).epsilon(0.2));
  CHECK(judge_config(timed(0.160), noisy, o).result == gate_verdict::slower);
  // One night 10x off among quiet ones moves neither center nor spread.
  const auto one_wild = nights({0.100, 0.101, 1.000, 0.099, 0.100, 0.102, 0.098});
  CHECK(judge_config(timed(0.150), one_wild, o).result == gate_verdict::slower);
  // Quiet nights: the 5% minimum still holds (MAD near 0 by chance).
  const auto flat = nights({0.100, 0.100, 0.100, 0.100, 0.100});
  CHECK(judge_config(timed(0.103, 0.995, 1.005), flat, o).result == gate_verdict::same);
  CHECK(judge_config(timed(0.110, 0.995, 1.005), flat, o).result == gate_verdict::slower);
}

TEST_CASE("a history spread beyond max_spread is TOO_NOISY, never a regression") {
  const gate_options o;
  const auto wild = nights({0.05, 0.20, 0.50, 0.10, 0.30});
  const auto v = judge_config(timed(1.0), wild, o);
  CHECK(v.result == gate_verdict::too_noisy);
  CHECK_FALSE(is_regression(v.result));
  CHECK(v.reason.find("too noisy") != std::string::npos);
}

TEST_CASE("fewer than min_history nights: TOO_NOISY, whatever tonight says") {
  const gate_options o;
  const auto v = judge_config(timed(0.300), nights({0.100, 0.100, 0.100, 0.100}), o);
  CHECK(v.result == gate_verdict::too_noisy);
  CHECK(v.reason.find("too few nights") != std::string::npos);
  CHECK(v.timing->ratio == doctest::Approx(3.0));
  CHECK(judge_config(timed(0.300), nights({0.1, 0.1, 0.1, 0.1, 0.1}), o).result ==
        gate_verdict::slower);
}

TEST_CASE("a single baseline: disjoint intervals and beyond 10%") {
  const gate_options o;
  const auto two = nights({0.100, 0.100});
  const auto v = judge_config(timed(0.108), two, o, /*single_baseline=*/true);
  CHECK(v.result == gate_verdict::same);  // disjoint but under 10%
  CHECK(v.timing->against == "baseline");
  CHECK(judge_config(timed(0.120), two, o, true).result == gate_verdict::slower);
  // Overlapping intervals: not called, however large the ratio of medians.
  CHECK(judge_config(timed(0.120, 0.7, 1.1), two, o, true).result == gate_verdict::same);
  // single_baseline uses the latest night even with a long history.
  const auto history = nights({0.200, 0.200, 0.200, 0.100});
  const auto b = judge_config(timed(0.120), history, o, /*single_baseline=*/true);
  CHECK(b.result == gate_verdict::slower);
  CHECK(b.timing->center == doctest::Approx(0.100));
}

TEST_CASE("paired speedups: a smaller speedup is the slower direction") {
  const gate_options o;
  std::vector<night_state> history;
  for (const double s : {2.0, 2.02, 1.98, 2.01, 1.99, 2.0}) {
    night_state n = timed(s);
    n.timing->kind = figure_kind::speedup;
    history.push_back(n);
  }
  night_state now = timed(1.5);
  now.timing->kind = figure_kind::speedup;
  const auto v = judge_config(now, history, o);
  CHECK(v.result == gate_verdict::slower);
  CHECK(v.timing->ratio == doctest::Approx(2.0 / 1.5));
  now.timing->interval = {2.0, 1.97, 2.03, 0.95, 7};
  CHECK(judge_config(now, history, o).result == gate_verdict::same);
  // A seconds history is not compared with a speedup tonight.
  CHECK(judge_config(now, nights({0.1, 0.1, 0.1, 0.1, 0.1}), o).result == gate_verdict::not_timed);
}

TEST_CASE("errors and verification codes: BROKEN / FIXED whatever the timing says") {
  const gate_options o;
  const auto history = nights({0.1, 0.1, 0.1, 0.1, 0.1});
  night_state failed;
  failed.result = night_state::outcome::failed;
  failed.detail = "RuntimeError: boom";
  const auto broken = judge_config(failed, history, o);
  CHECK(broken.result == gate_verdict::broken);
  CHECK(broken.reason.find("boom") != std::string::npos);
  CHECK(judge_config(timed(0.1), {failed}, o).result == gate_verdict::fixed);
  CHECK(judge_config(failed, {failed}, o).result == gate_verdict::both_failed);
  const auto fail_code = judge_config(timed(0.1, 0.98, 1.02, "FAIL"), history, o);
  CHECK(fail_code.result == gate_verdict::broken);
  CHECK(fail_code.reason == "verification PASS -> FAIL");
  // Not verified tonight (VERIFIER_SKIPPED) is not a failure.
  CHECK(judge_config(timed(0.1, 0.98, 1.02, "VERIFIER_SKIPPED"), history, o).result ==
        gate_verdict::same);
}

TEST_CASE("accuracy figures: a PASS -> PASS drift beyond the nights' range is ACCURACY_DRIFT") {
  const gate_options o;
  auto history = nights({0.1, 0.1, 0.1, 0.1, 0.1});
  history[0].accuracy.rmse_vs_fp64 = 3.0e-5;
  history[1].accuracy.rmse_vs_fp64 = 3.4e-5;
  history[2].accuracy.rmse_vs_fp64 = 3.2e-5;
  night_state now = timed(0.1);
  now.accuracy.rmse_vs_fp64 = 6.0e-5; // within 2 x the largest
  CHECK(judge_config(now, history, o).result == gate_verdict::same);
  now.accuracy.rmse_vs_fp64 = 3.4e-4; // 10x
  const auto drift = judge_config(now, history, o);
  CHECK(drift.result == gate_verdict::accuracy_drift);
  CHECK(is_regression(drift.result));
  CHECK(drift.reason.find("rmse_vs_fp64") != std::string::npos);
  // Below the absolute floor nothing drifts (bitwise-equal nights hold 0).
  for (auto& n : history)
    n.accuracy.cosine_distance = 0;
  now.accuracy.rmse_vs_fp64.reset();
  now.accuracy.cosine_distance = 1e-12;
  CHECK(judge_config(now, history, o).result == gate_verdict::same);
  now.accuracy.cosine_distance = 1e-3;
  CHECK(judge_config(now, history, o).result == gate_verdict::accuracy_drift);
  // Every figure that drifted is named, in the reason's order.
  now.accuracy.rmse_vs_fp64 = 3.4e-4;
  CHECK(judge_config(now, history, o).reason ==
        "rmse_vs_fp64 0.00034 > 2.000 x the reference nights' largest 3.4e-05; "
        "1 - cosine_similarity 0.001 > 2.000 x the reference nights' largest 0.0");
}

TEST_CASE("NEW without a reference night, MISSING without tonight's record") {
  const gate_options o;
  CHECK(judge_config(timed(0.1), {}, o).result == gate_verdict::new_config);
  const auto missing = judge_config(std::nullopt, nights({0.1}), o);
  CHECK(missing.result == gate_verdict::missing);
  CHECK(std::string(gate_verdict_name(missing.result)) == "MISSING");
}

TEST_CASE("only the last history_nights nights count") {
  gate_options o;
  o.history_nights = 3;
  o.min_history_nights = 3;
  // Old nights at 0.2 s, the last three at 0.1 s: tonight's 0.2 s is slower than recent history.
  const auto v = judge_config(timed(0.2), nights({0.2, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1}), o);
  CHECK(v.result == gate_verdict::slower);
  CHECK(v.timing->nights == 3);
}
