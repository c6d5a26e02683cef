#!/bin/bash
# The GPU benches' build step: configure build-gpu (Release, sm_90 unless TORCH_CUDA_ARCH_LIST says
# otherwise, LibTorch from python3's torch) once, then build the named targets with BUILD_JOBS
# jobs (default: every core, nproc).
# Logs go to OUT_DIR/cmake.log and OUT_DIR/build.log; on a failure the log's tail is printed and
# the status is 1.
# Usage: bench/build_gpu.sh OUT_DIR [TARGET...]   (default target: experiment_runner;
#   BUILD_DIR overrides build-gpu)
set -euo pipefail
out=$1; shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(experiment_runner)
build=${BUILD_DIR:-build-gpu}
mkdir -p "$out"
if [ ! -f "$build/build.ninja" ]; then
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')" \
    > "$out/cmake.log" 2>&1 || { tail -50 "$out/cmake.log"; exit 1; }
fi
cmake --build "$build" -j"${BUILD_JOBS:-$(nproc)}" --target "${targets[@]}" > "$out/build.log" 2>&1 ||
  { tail -50 "$out/build.log"; exit 1; }
