// Per-iteration overhead of the child's timing loop (run_timed_repeats through a step_function)
// against a bare LibTorch loop doing the same work in the same process. Prints figures with their
// spread; BENCHMARKS.md records them per machine.
//
//   bench_timing_loop_overhead [cpu|cuda] [iterations per repeat, default 10000] [repeats, default 30]
#include "worker/timing_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace benchmatrix;

int main(int argc, char** argv) {
  const std::string device_name = argc > 1 ? argv[1] : "cpu";
  const int iterations = argc > 2 ? std::stoi(argv[2]) : 10000;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 30;
  const torch::Device device = device_name == "cuda" ? torch::kCUDA : torch::kCPU;
  torch::NoGradGuard no_grad;
  // The work of one step: a one-element in-place add (one tiny kernel on CUDA).
  const auto work = [](const torch::Tensor& x) { return x.add_(1); };
  model_inputs example = {torch::zeros({1}, torch::TensorOptions().device(device))};
  const step_function step = [&work](const model_inputs& in) {
    return c10::IValue(work(in[0].toTensor()));
  };

  timing_options options;
  options.repeat = repeats;
  options.iterations_per_run = iterations;
  options.device = device;
  (void)run_timed_repeats(step, example, options, [](int, const c10::IValue&) {});  // warm-up
  const auto harness = run_timed_repeats(step, example, options, [](int, const c10::IValue&) {});

  std::vector<double> bare;  // seconds per repeat
  torch::Tensor x = torch::zeros({1}, torch::TensorOptions().device(device));
  for (int r = 0; r < repeats; ++r) {
    synchronize_device(device);
    const auto start = std::chrono::steady_clock::now();
    torch::Tensor out;
    for (int i = 0; i < iterations; ++i) out = work(x);
    synchronize_device(device);
    bare.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::vector<double> ours;
  for (const auto& t : harness) ours.push_back(t.total_time);
  std::sort(bare.begin(), bare.end());
  std::sort(ours.begin(), ours.end());
  const auto us_per_iter = [&](double seconds) { return seconds / iterations * 1e6; };
  const auto median = [](const std::vector<double>& v) { return v[v.size() / 2]; };
  std::printf("device %s, %d iterations x %d repeats\n", device.str().c_str(), iterations, repeats);
  std::printf("bare loop     us/iter: min %.3f median %.3f max %.3f\n", us_per_iter(bare.front()),
              us_per_iter(median(bare)), us_per_iter(bare.back()));
  std::printf("timing loop   us/iter: min %.3f median %.3f max %.3f\n", us_per_iter(ours.front()),
              us_per_iter(median(ours)), us_per_iter(ours.back()));
  std::printf("overhead      us/iter: median %.3f (min-to-min %.3f)\n",
              us_per_iter(median(ours) - median(bare)), us_per_iter(ours.front() - bare.front()));
  return 0;
}
