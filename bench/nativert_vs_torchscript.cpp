// torch::nativert (LibTorch 2.11's C++ runtime for torch.export packages) against the TorchScript
// interpreter the imported suites run (suites/imported: torch::jit::load, graph optimisation
// off), on the same model: issue 25 asks to evaluate nativert as the runtime of imported models.
// Reads the directory bench/nativert_programs.py writes (model.pt, model.pt2,
// model.decomposed.pt2, inputs.pt, expected.pt); checks that each runtime's output matches the
// eager one; then times forwards interleaved, ROUNDS rounds of (nativert, nativert decomposed,
// TorchScript), each REPEATS runs of ITERATIONS forwards, and prints per runtime and round the
// median milliseconds per forward and the range over the repeats. CPU, eval, under no_grad (the
// interpreter) and c10::InferenceMode (nativert's ModelRunner enters it itself: it runs
// inference only).
//
//   bench_nativert_vs_torchscript DIR [iterations, default 300] [repeats, default 7]
//                                     [rounds, default 3]
#include <torch/nativert/ModelRunnerHandle.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace {

/// The tensors of a torch.save'd tuple.
std::vector<c10::IValue> load_tuple(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  const auto elements = torch::pickle_load(bytes).toTupleRef().elements();
  // parentheses: braces would make an initializer list of two IValues (bools, from the pointers)
  return std::vector<c10::IValue>(elements.begin(), elements.end());
}

struct ms_per_forward {
  double median = 0, low = 0, high = 0;  // over the repeats
};

ms_per_forward measure(int repeats, int iterations, const std::function<void()>& forward) {
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) forward();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                           start)
                     .count() /
                 iterations);
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [iterations] [repeats] [rounds]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int iterations = argc > 2 ? std::stoi(argv[2]) : 300;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 7;
  const int rounds = argc > 4 ? std::stoi(argv[4]) : 3;
  const std::vector<c10::IValue> inputs = load_tuple(dir / "inputs.pt");
  const torch::Tensor expected = load_tuple(dir / "expected.pt").at(0).toTensor();

  torch::NoGradGuard no_grad;
  torch::jit::GraphOptimizerEnabledGuard as_imported(false);
  torch::jit::Module traced = torch::jit::load((dir / "model.pt").string());
  traced.eval();
  torch::nativert::ModelRunnerHandle exported((dir / "model.pt2").string(), "model");
  torch::nativert::ModelRunnerHandle decomposed((dir / "model.decomposed.pt2").string(), "model");

  struct runtime {
    const char* name;
    std::function<c10::IValue()> forward;
  };
  const std::vector<runtime> runtimes = {
      {"nativert, model.pt2           ", [&] { return exported.run(inputs, {}); }},
      {"nativert, model.decomposed.pt2", [&] { return decomposed.run(inputs, {}); }},
      {"TorchScript, model.pt         ", [&] { return traced.forward(inputs); }},
  };
  for (const auto& r : runtimes) {
    const c10::IValue result = r.forward();  // (logits,), or the tensor where a runtime unpacks it
    const torch::Tensor output =
        result.isTuple() ? result.toTupleRef().elements().at(0).toTensor() : result.toTensor();
    std::printf("%s output %s, max abs difference from eager %.3g\n", r.name,
                c10::str(output.sizes()).c_str(), (output - expected).abs().max().item<double>());
  }
  std::printf("%d forwards x %d repeats per round, ms per forward: median (min-max)\n", iterations,
              repeats);
  for (int round = 1; round <= rounds; ++round)
    for (const auto& r : runtimes) {
      for (int i = 0; i < 20; ++i) (void)r.forward();  // warm-up
      const ms_per_forward t = measure(repeats, iterations, [&] { (void)r.forward(); });
      std::printf("round %d  %s %8.4f (%.4f-%.4f)\n", round, r.name, t.median, t.low, t.high);
    }
  return 0;
}
