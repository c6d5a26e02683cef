#!/bin/bash
# run_and_check on the GPU machine (BENCHMARKS.md, "Other measurements"): the seed's two examples rebuilt
# as our fixtures (tests/kernel_check/gpu/), checked and timed with --measure_performance:
#   add       elementwise add, ATen reference (.cpp) against a hand-written CUDA kernel (.cu)
#   embed     LinearEmbedding (nn::Linear, then * sqrt(d_model)) against the scaling folded into addmm
#   add_py    the seed's own format: KernelBench Python files, the candidate built with load_inline
# Each runs twice: the second run must hit the build cache (no compile). The summaries are printed;
# the JSON results go to OUT_DIR.
# Usage: bench/run_and_check_gpu.sh OUT_DIR [CASE...]     (default: add embed add_py)
#   PERF_TRIALS=N timed calls per module (default 100); BUILD=dir (default build-gpu).
set -euo pipefail
out=$1; shift
cases=${*:-add embed add_py}
mkdir -p "$out"
build=${BUILD:-build-gpu}
trials=${PERF_TRIALS:-100}
if [ ! -x "$build/run_and_check" ] || [ ! -x "$build/run_and_check_worker" ]; then
  export TORCH_CUDA_ARCH_LIST=9.0
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')" \
    > "$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
fi
cmake --build "$build" -j16 --target run_and_check > "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee "$out/gpu.txt"
fixtures=tests/kernel_check/gpu
check() {  # NAME ARGS...
  local name=$1; shift
  for run in 1 2; do
    echo "=== $name (run $run) $(date +%T)"
    "$build/run_and_check" --device cuda:0 --build_dir_prefix "$out/builds" --measure_performance \
      --num_correct_trials 3 --num_perf_trials "$trials" --json "$out/$name-$run.json" "$@" \
      || echo "(exit status $?)"
  done
}
for c in $cases; do
  case $c in
    add) check add --ref_src $fixtures/elementwise_add_ref.cpp --custom_src $fixtures/elementwise_add.cu ;;
    embed) check embed --ref_src $fixtures/linear_embedding_ref.cpp --custom_src $fixtures/linear_embedding_fused.cpp \
             --ref_entry_point LinearEmbedding --custom_entry_point LinearEmbeddingNew ;;
    add_py) check add_py --ref_src $fixtures/model_ex_add.py --custom_src $fixtures/model_new_ex_add.py ;;
    *) echo "unknown case $c"; exit 2 ;;
  esac
done
