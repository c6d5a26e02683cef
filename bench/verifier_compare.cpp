// The verifier's comparisons of outputs on the CPU (worker/verify_child.cpp: the bitwise same() of
// the two eager runs, same() of the backend against eager and float64, then worst_output's
// per-leaf figures), timed on a synthetic train-step output: a float32 logits leaf and, for
// LEAVES parameters, a gradient and an updated parameter each (dicts, as the train step returns
// them), MILLIONS of elements in all; the float64 reference is eager plus 1e-6 noise. Two cases:
// the backend's output bitwise eager's (every eager experiment) and eager plus 1e-5 noise (a
// compiled backend's). Prints the median of REPEATS seconds per comparison and case; BENCHMARKS.md
// ("Verifier comparisons") records them per machine.
//
//   bench_verifier_compare [millions, default 40] [leaves, default 200] [repeats, default 3]
//                          [deterministic: PyTorch's deterministic algorithms on, as
//                           --verify-deterministic runs the verifier]
#include "verifier/output_comparison.hpp"
#include "verifier/same.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace benchmatrix;

namespace {

/// (logits, {name: parameter}, {name: gradient}): a fifth of the elements in the logits, the rest
/// split evenly between the two dicts' leaves.
c10::IValue train_output(double millions, int leaves) {
  const int64_t total = static_cast<int64_t>(millions * 1e6);
  const int64_t per_leaf = std::max<int64_t>(1, total * 4 / 5 / (2 * leaves));
  c10::impl::GenericDict parameters(c10::StringType::get(), c10::TensorType::get());
  c10::impl::GenericDict gradients(c10::StringType::get(), c10::TensorType::get());
  for (int i = 0; i < leaves; ++i) {
    parameters.insert("layer" + std::to_string(i) + ".weight", torch::randn({per_leaf}));
    gradients.insert("layer" + std::to_string(i) + ".weight.grad", torch::randn({per_leaf}));
  }
  return c10::ivalue::Tuple::create({torch::randn({total / 5}), parameters, gradients});
}

/// `output` with every tensor mapped.
c10::IValue map_leaves(const c10::IValue& output,
                       const std::function<torch::Tensor(const torch::Tensor&)>& f) {
  if (output.isTensor()) return f(output.toTensor());
  if (output.isTuple()) {
    std::vector<c10::IValue> elements;
    for (const auto& e : output.toTupleRef().elements()) elements.push_back(map_leaves(e, f));
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  c10::impl::GenericDict mapped(c10::StringType::get(), c10::TensorType::get());
  for (const auto& entry : output.toGenericDict())
    mapped.insert(entry.key(), map_leaves(entry.value(), f));
  return mapped;
}

double median_seconds(int repeats, const std::function<void()>& work) {
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    work();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const double millions = argc > 1 ? std::stod(argv[1]) : 40;
  const int leaves = argc > 2 ? std::stoi(argv[2]) : 200;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 3;
  const bool deterministic = argc > 4 && std::string(argv[4]) == "deterministic";
  if (deterministic) at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
  torch::manual_seed(0);
  const c10::IValue eager = train_output(millions, leaves);
  const c10::IValue rerun = map_leaves(eager, [](const torch::Tensor& t) { return t.clone(); });
  const c10::IValue fp64 = map_leaves(eager, [](const torch::Tensor& t) {
    return t.to(torch::kDouble) + 1e-6 * torch::randn_like(t, torch::kDouble);
  });
  const c10::IValue perturbed = map_leaves(
      eager, [](const torch::Tensor& t) { return t + 1e-5 * torch::randn_like(t); });
  std::printf("%.0f M elements (%d leaves a dict), %d intra-op threads, median of %d%s\n",
              millions, leaves, at::get_num_threads(), repeats,
              deterministic ? ", deterministic algorithms" : "");
  same_options exact;
  exact.tol = 0;
  exact.equal_nan = true;
  same_options options;
  options.tol = 1e-3;
  options.equal_nan = true;
  const double bitwise = median_seconds(repeats, [&] { (void)same(eager, rerun, {}, exact); });
  std::printf("bitwise same() of the two eager runs          %8.3f s\n", bitwise);
  for (const auto& [name, backend] :
       {std::pair{"bitwise eager's", rerun}, std::pair{"eager + 1e-5 noise", perturbed}}) {
    const double judged =
        median_seconds(repeats, [&, b = backend] { (void)same(eager, b, fp64, options); });
    const double figures = median_seconds(
        repeats, [&, b = backend] { (void)worst_output(eager, b, fp64, &options); });
    std::printf("backend %-20s same() %8.3f s, worst_output() %8.3f s\n", name, judged, figures);
  }
}
