#!/bin/bash
# The GPU benches' build step: configure build-gpu (Release, sm_90 unless TORCH_CUDA_ARCH_LIST says
# otherwise, LibTorch from python3's torch) once, then build the named targets with BUILD_JOBS
# jobs (default: every core, nproc).
# Logs go to OUT_DIR/cmake.log and OUT_DIR/build.log; on a failure the log's tail is printed and
# the status is 1.
# Usage: bench/build_gpu.sh OUT_DIR [TARGET...]   (default target: experiment_runner;
#   BUILD_DIR overrides build-gpu, PYTHON the Python whose torch is built against (python3))
#
# A runner built on the build machine saves the GPU machine's build (minutes of device time on a
# fresh machine): where the build machine's torch is the GPU machine's wheel (torch 2.11.0+cu130
# on both, 2026-12-06),
#   here:  PYTHON=.venv/bin/python bench/build_gpu.sh --carry OUT   -> build-gpu-carry/
#   there: carry build-gpu-carry; this script, asked for experiment_runner alone, then makes
#          BUILD_DIR/experiment_runner a wrapper of the carried binary (the checkout path compiled
#          into it linked to this checkout, BENCHMATRIX_PYTHON=python3, torch's and CUDA's
#          libraries and the carried Boost.Program_options and yaml-cpp on LD_LIBRARY_PATH) if a
#          one-config CUDA sweep of the dummy model runs with it (timed records, not SKIPs), and
#          builds as above otherwise (saying why in OUT_DIR/carried.log).
set -euo pipefail
carry=0
if [ "${1:-}" = --carry ]; then carry=1; shift; fi
out=$1; shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(experiment_runner)
build=${BUILD_DIR:-build-gpu}
python=${PYTHON:-python3}
carried=build-gpu-carry
mkdir -p "$out"

use_carried_runner() {  # 0 when BUILD_DIR/experiment_runner now runs the carried binary
  [ -x "$carried/experiment_runner" ] && [ -f "$carried/source_dir" ] &&
    [ "${targets[*]}" = experiment_runner ] && [ ! -f "$build/build.ninja" ] || return 1
  local source_dir torch_dir
  source_dir=$(cat "$carried/source_dir")
  if [ "$(realpath -m "$source_dir")" != "$(realpath .)" ]; then
    [ ! -e "$source_dir" ] || [ -L "$source_dir" ] || { echo "$source_dir exists" >> "$out/carried.log"; return 1; }
    mkdir -p "$(dirname "$source_dir")" && ln -sfn "$(realpath .)" "$source_dir" || return 1
  fi
  torch_dir=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))') || return 1
  python=$(command -v "$python")  # the wrapper names it by its path: the helpers are exec'd, not run by a shell
  mkdir -p "$build"
  cat > "$build/experiment_runner" <<EOF
#!/bin/sh
# The runner carried from the build machine ($carried/, bench/build_gpu.sh --carry).
export BENCHMATRIX_PYTHON=\${BENCHMATRIX_PYTHON:-$python}
export LD_LIBRARY_PATH=$torch_dir/lib:$(dirname "$torch_dir")/nvidia/cu13/lib:/usr/local/cuda/lib64:$(realpath "$carried/lib")\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
exec "$(realpath "$carried/experiment_runner")" "\$@"
EOF
  chmod +x "$build/experiment_runner"
  if "$build/experiment_runner" --suite-name=dummy --accelerator=cuda --xla=None --dynamo=None \
      --repeat=2 --no-resume --output-dirname="$out/carried-check" >> "$out/carried.log" 2>&1 &&
      grep -q '"per_iter_time"' "$out/carried-check/results.jsonl"; then  # timed, not a SKIP
    echo "using the carried runner ($carried/experiment_runner)"
    return 0
  fi
  echo "the carried runner did not run here (OUT_DIR/carried.log): building" | tee -a "$out/carried.log"
  rm -f "$build/experiment_runner"
  return 1
}

if [ "$carry" = 0 ] && use_carried_runner; then exit 0; fi
if [ ! -f "$build/build.ninja" ]; then
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
  python_path=$(command -v "$python")
  [ "${python_path#/}" != "$python_path" ] || python_path=$PWD/$python_path  # absolute, not resolved
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$python_path" \
    -DCMAKE_PREFIX_PATH="$("$python" -c 'import torch;print(torch.utils.cmake_prefix_path)')" \
    > "$out/cmake.log" 2>&1 || { tail -50 "$out/cmake.log"; exit 1; }
fi
cmake --build "$build" -j"${BUILD_JOBS:-$(nproc)}" --target "${targets[@]}" > "$out/build.log" 2>&1 ||
  { tail -50 "$out/build.log"; exit 1; }
if [ "$carry" = 1 ]; then
  mkdir -p "$carried"
  cp "$build/experiment_runner" "$carried/"
  realpath . > "$carried/source_dir"  # the paths compiled into it (python/, configs/) start here
  # This machine's Boost.Program_options and yaml-cpp libraries, which the GPU machine lacks
  # (Debian 12's libboost_program_options.so.1.74.0 was missing on an H100 machine, 2026-12-06;
  # its image has yaml-cpp 0.8). glibc, libstdc++ and OpenSSL 3 are older here than there.
  mkdir -p "$carried/lib"
  ldd "$build/experiment_runner" | awk '/=> \// {print $3}' | grep -E '/lib(boost_|yaml-cpp)' |
    xargs -r cp -L -t "$carried/lib"
  echo "$carried/: $(du -sh "$carried" | cut -f1); carry it to the GPU machine"
fi
