// The TorchScript interpreter's host cost per op, against the same ATen calls made directly from
// C++: what an imported program (suites/imported, run as `torchscript_program_module` runs it:
// the graph executor's optimisations off) pays over a hand-written model when the step is
// launch-bound, as hf_Bert's eval step is on a GPU (BENCHMARKS.md, "Harness overhead"). The program is a
// module of OPS parameters and a forward of OPS adds, x = torch.add(x, self.w<i>): per op one
// prim::GetAttr and one aten::add, as a traced transformers layer reads each weight; on one-element
// CPU tensors, so the kernels cost next to nothing and what is timed is dispatch. Prints the
// median and range over REPEATS runs of ITERATIONS forwards, per op, for: direct C++ calls, the
// interpreter as the imported suites run it, and the interpreter with the executor's
// optimisations on.
//
//   bench_interpreter_overhead [ops, default 1000] [iterations, default 200] [repeats, default 15]
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

struct us_per_op {
  double median = 0, low = 0, high = 0;  // over the repeats
};

/// The microseconds per op of `iterations` calls of `step`, over `repeats` repeats.
us_per_op measure(int repeats, int iterations, int ops, const std::function<void()>& step) {
  std::vector<double> per_op;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) step();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    per_op.push_back(seconds * 1e6 / (static_cast<double>(iterations) * ops));
  }
  std::sort(per_op.begin(), per_op.end());
  return {per_op[per_op.size() / 2], per_op.front(), per_op.back()};
}

}  // namespace

int main(int argc, char** argv) {
  const int ops = argc > 1 ? std::stoi(argv[1]) : 1000;
  const int iterations = argc > 2 ? std::stoi(argv[2]) : 200;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 15;
  torch::NoGradGuard no_grad;  // eval, as the timing loop runs it
  std::vector<torch::Tensor> weights;
  torch::jit::Module program("chain");
  std::string source = "def forward(self, x):\n";
  for (int i = 0; i < ops; ++i) {
    weights.push_back(torch::rand({1}));
    program.register_parameter("w" + std::to_string(i), weights.back(), /*requires_grad=*/false);
    source += "    x = torch.add(x, self.w" + std::to_string(i) + ")\n";
  }
  source += "    return x\n";
  program.define(source);
  program.eval();
  const torch::Tensor input = torch::rand({1});
  const std::vector<c10::IValue> arguments{input};

  const auto direct = [&] {
    torch::Tensor x = input;
    for (const auto& w : weights) x = torch::add(x, w);
  };
  const auto interpreted = [&] { (void)program.forward(arguments); };
  for (int i = 0; i < 20; ++i) direct();  // warm-up
  const us_per_op direct_us = measure(repeats, iterations, ops, direct);
  us_per_op plain_us, optimised_us;
  {
    torch::jit::GraphOptimizerEnabledGuard as_imported(false);
    for (int i = 0; i < 20; ++i) interpreted();
    plain_us = measure(repeats, iterations, ops, interpreted);
  }
  for (int i = 0; i < 20; ++i) interpreted();  // the profiling executor's runs, then its plan
  optimised_us = measure(repeats, iterations, ops, interpreted);
  std::printf("%d ops (GetAttr + add on one-element CPU tensors), %d forwards x %d repeats, "
              "us per op: median (min-max)\n", ops, iterations, repeats);
  for (const auto& [name, figures] :
       {std::pair{"direct C++ calls                         ", direct_us},
        std::pair{"interpreter, optimisations off (imported)", plain_us},
        std::pair{"interpreter, optimisations on            ", optimised_us}})
    std::printf("%s %7.3f (%.3f-%.3f)  %+.3f against direct\n", name, figures.median, figures.low,
                figures.high, figures.median - direct_us.median);
}
