#include "worker/timing_loop.hpp"

#include "torch_support/ivalue_tensors.hpp"

#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace benchmatrix {

model_inputs prepare_step_inputs(const model_inputs& example, bool randomize) {
  model_inputs copy;
  copy.reserve(example.size());
  for (const auto& input : example) {
    copy.push_back(map_tensors(input, [randomize](const torch::Tensor& t) {
      // Floating inputs of any precision are randomised (the original crashed on bf16/fp16).
      if (randomize && t.is_floating_point()) return torch::randn_like(t);
      return t.clone();
    }));
  }
  return copy;
}

namespace {

/// bench.do_bench of the original (Triton's): the minimum over adaptive repeats of one step timed
/// with CUDA events, each after zeroing a 256 MB buffer so the L2 cache starts cold. Milliseconds.
double cuda_event_minimum_ms(const step_function& step, const model_inputs& inputs,
                             const torch::Device& device) {
  constexpr int64_t flush_bytes = 256LL * 1024 * 1024;  // larger than any GPU's L2 (H100: 50 MB)
  constexpr double warmup_ms = 25;                      // Triton's defaults
  constexpr double measure_ms = 100;
  constexpr int estimate_runs = 5;
  const c10::impl::VirtualGuardImpl guard(device.type());
  const c10::Stream stream = guard.getStream(device);
  (void)step(inputs);
  synchronize_device(device);
  auto cache = torch::empty({flush_bytes / 4}, torch::TensorOptions().dtype(torch::kInt).device(device));
  const auto timed_event = [&] { return c10::Event(device.type(), c10::EventFlag::BACKEND_DEFAULT); };
  auto start = timed_event();
  auto end = timed_event();
  start.record(stream);
  for (int i = 0; i < estimate_runs; ++i) {
    cache.zero_();
    (void)step(inputs);
  }
  end.record(stream);
  end.synchronize();
  const double estimate_ms = std::max(start.elapsedTime(end) / estimate_runs, 1e-6);
  const int warmup = std::max(1, static_cast<int>(warmup_ms / estimate_ms));
  const int repeats = std::max(1, static_cast<int>(measure_ms / estimate_ms));
  for (int i = 0; i < warmup; ++i) (void)step(inputs);
  std::vector<c10::Event> starts, ends;
  for (int i = 0; i < repeats; ++i) {
    starts.push_back(timed_event());
    ends.push_back(timed_event());
  }
  for (int i = 0; i < repeats; ++i) {
    cache.zero_();
    starts[i].record(stream);
    (void)step(inputs);
    ends[i].record(stream);
  }
  synchronize_device(device);
  double best = starts[0].elapsedTime(ends[0]);
  for (int i = 1; i < repeats; ++i) best = std::min(best, starts[i].elapsedTime(ends[i]));
  return best;
}

}  // namespace

void check_timing_options(const timing_options& o) {
  if (o.pure_wall_time && !o.device.is_cuda())
    throw std::invalid_argument("--pure-wall-time times steps with CUDA events; it needs "
                                "accelerator=cuda (this config runs on " + o.device.str() + ")");
}

void prepare_repeat_inputs(const model_inputs& example, const timing_options& o,
                           std::vector<model_inputs>& inputs) {
  inputs.resize(static_cast<size_t>(o.iterations_per_run));
  reset_rng_state();
  for (auto& copy : inputs) copy = prepare_step_inputs(example, o.randomize_input);
}

c10::IValue run_timed_segment(const step_function& step, const std::vector<model_inputs>& inputs,
                              const timing_options& o, double& total_time) {
  reset_rng_state();
  synchronize_device(o.device);
  c10::IValue output;
  if (o.pure_wall_time) {
    double total_ms = 0;
    for (const auto& in : inputs) total_ms += cuda_event_minimum_ms(step, in, o.device);
    total_time = total_ms / 1e3;
    output = step(inputs.back());
    synchronize_device(o.device);
  } else {
    const auto start = std::chrono::steady_clock::now();
    for (const auto& in : inputs) output = step(in);
    synchronize_device(o.device);
    const auto end = std::chrono::steady_clock::now();
    total_time = std::chrono::duration<double>(end - start).count();
  }
  return output;
}

std::vector<repeat_timing>
run_timed_repeats(const step_function& step, const model_inputs& example_inputs,
                  const timing_options& o,
                  const std::function<void(int, const c10::IValue&)>& after_repeat) {
  check_timing_options(o);
  std::vector<repeat_timing> timings;
  timings.reserve(static_cast<size_t>(o.repeat));
  std::vector<model_inputs> inputs;
  for (int r = 0; r < o.repeat; ++r) {
    prepare_repeat_inputs(example_inputs, o, inputs);
    repeat_timing t;
    const c10::IValue output = run_timed_segment(step, inputs, o, t.total_time);
    t.per_iter_time = t.total_time / o.iterations_per_run;
    timings.push_back(t);
    after_repeat(r, output);
  }
  return timings;
}

}  // namespace benchmatrix
