#!/bin/bash
# backend_bench on the GPU machine (BENCHMARKS.md, "Other measurements"): the op-level suites on CUDA,
# bfloat16; timed cases with --perf (CUDA events, L2 flushed before every call, median of --repeats):
#   smoke-aten       the smoke suite, aten against itself (the sanity run: pass rate 1, speedup ~1)
#   opinfo-aten      the whole OpInfo suite with aten, correctness only, 8 op children at once
#                    (about 290 children, each initialising CUDA)
#   smoke-dir        the smoke suite against the example CUDA kernels in tests/backend_bench/gpu/
#                    (relu, add.Tensor, mul.Tensor; compiled with nvcc at run time, cached)
#   opinfo-dir       the OpInfo suite's tests of the same three ops against those kernels
#   smoke-dir-again  smoke-dir again: every kernel must be a build-cache hit
# Each prints backend_bench's summary (per op: passed/tests, geomean speedup; overall: ops, tests,
# pass rate, geomean speedup, perf@1). Logs and results.jsonl go to OUT_DIR/<case>/.
# Usage: bench/backend_bench_gpu.sh OUT_DIR [CASE...]   (default: all five)
#   REPEATS=N timed calls per side and test (default 100); BUILD=dir (default build-gpu).
set -euo pipefail
out=$1; shift
cases=${*:-smoke-aten opinfo-aten smoke-dir opinfo-dir smoke-dir-again}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${BUILD:-build-gpu}
repeats=${REPEATS:-100}
perf="--perf --repeats $repeats --warmup 10"
if [ ! -x "$build/backend_bench" ] || [ ! -x "$build/backend_bench_worker" ]; then
  export TORCH_CUDA_ARCH_LIST=9.0
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')" \
    > "$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
fi
cmake --build "$build" -j16 --target backend_bench > "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee "$out/gpu.txt"
kernels=tests/backend_bench/gpu
bench() {  # NAME ARGS...
  local name=$1; shift
  echo "=== $name $(date +%T)"
  rm -rf "$out/$name"
  "$build/backend_bench" --device cuda:0 --cache-dir "$out/cache" --log-dir "$out/$name" \
    --timeout 600 "$@" || echo "(exit status $?)"
}
for c in $cases; do
  case $c in
    smoke-aten) bench smoke-aten --suite smoke --backend aten $perf ;;
    opinfo-aten) bench opinfo-aten --suite opinfo --backend aten -j 8 ;;
    smoke-dir) bench smoke-dir --suite smoke --backend directory --kernels-dir $kernels $perf ;;
    opinfo-dir) bench opinfo-dir --suite opinfo --backend directory --kernels-dir $kernels $perf ;;
    smoke-dir-again) bench smoke-dir-again --suite smoke --backend directory --kernels-dir $kernels $perf ;;
    *) echo "unknown case $c"; exit 2 ;;
  esac
done
