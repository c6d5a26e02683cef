// The verifier's tolerance and comparison mode for one config: by test, device, the precision the
// eager reference runs in, and the model's tolerance lists in the suite's YAML
// (configs/torchbench.yaml). The rule, in order (first match sets the tolerance):
//
//  1. --verify-tolerance T: T.
//  2. float16 runs (a float16 cast, or float16 autocast: CUDA training and force_amp models) —
//     PyTorch's get_tolerance_and_cosine_flag for --float16/--amp (dynamo_bench.md §1.5):
//     tolerance.even_higher 8e-2, tolerance.higher_fp16 1e-2, otherwise 1e-3.
//  3. bfloat16 runs (inference's default cast) in tolerance.higher_bf16: 1e-2 (PyTorch's --bfloat16).
//  4. train on CUDA without autocast (float32; TF32 matmuls by default): tolerance.even_higher 8e-2,
//     tolerance.higher 1e-3, otherwise 1e-3 (PyTorch's, where `higher` equals the default).
//  5. otherwise 1e-4 (float32 training on the CPU, PyTorch's and the XLA runner's default).
//  Then eval is raised to at least 1e-2: the XLA runner's TorchBenchModel.tolerance() gives every
//  eval config 1e-2 (xla_runner.md §6), its inference running in bfloat16/float16 as here; keeping
//  it keeps this runner's verdicts comparable with the original's (PyTorch's bfloat16 1e-4 would
//  send nearly every bfloat16 leaf to the RMSE rule).
//
// Cosine similarity (>= 0.99) instead of allclose/RMSE: --verify-cosine-similarity, or the model in
// tolerance.cosine (for every test and device, as the XLA runner; PyTorch reads that list in CUDA
// training only), or — decided by the caller — the float64 golden run failed.
#pragma once

#include "suites/precision_rule.hpp"
#include "suites/suite_config.hpp"

#include <optional>
#include <string>

namespace benchmatrix {

struct tolerance_inputs {
  std::string model;
  bool training = false;
  bool cuda = false;
  precision_plan precision;  // what the eager reference computes in (suites/precision_rule.hpp)
  std::optional<double> tolerance_override;  // --verify-tolerance
  bool cosine_override = false;              // --verify-cosine-similarity
};

struct tolerance_choice {
  double tolerance = 1e-4;  // same()'s tol: allclose's atol = rtol, and the RMSE rule's slack/10
  bool cosine = false;
  std::string rule;  // which rule set the tolerance, for the record (e.g. "float16: default 1e-3")
};

/// The rule above. `config` may be null (a suite without a YAML): no model is in any list.
[[nodiscard]] tolerance_choice choose_tolerance(const tolerance_inputs& in,
                                                const suite_config* config);

}  // namespace benchmatrix
