#!/bin/bash
# Where one model's train step spends its device time, ours against Python's (issue 50: resnet50's
# inductor step 10.5 ms against torch.compile reduce-overhead's 7.0 ms on an H200, 2026-12-02), in
# one device call. Steps, in order:
#   build    configure and build experiment_runner into build-gpu (bench/build_gpu.sh)
#   ours     our inductor and cudagraphs train step of MODEL at BATCH, --dump-pytorch-profiles:
#            Kineto traces of STEPS steps (the last of 2 profiled repeats is read)
#   python   the pip original's step (bench/train_step_python.py, float16 autocast as ours):
#            eager, torch.compile and reduce-overhead, warmed up, then STEPS steps each under
#            torch.profiler
#   compare  bench/train_kernels.py over the five traces: kernel families per step (convolution
#            forward/backward and their layout copies, GEMM, Triton, ATen elementwise and
#            BatchNorm, optimizer, memcpy/memset), the convolutions' layout (nhwc/nchw as the
#            kernel names give it), the top kernels; OUT_DIR/kernels.md
#   memory   our inductor and cudagraphs step again with --dump-memory-snapshot (2 repeats of
#            STEPS steps): what is alive at each snapshot's peak, the CUDA graph capture's
#            included (bench/memory_snapshot_peak.py), OUT_DIR/memory.md; the snapshots stay
#            under OUT_DIR/memory/MODEL/ for https://pytorch.org/memory_viz (issue 50: the
#            inductor step's capture peaked at 3317 MB against cudagraphs' 1908, H100, 2026-12-07)
# Usage: bench/train_kernels_gpu.sh OUT_DIR STEP...  e.g. bench/train_kernels_gpu.sh $OUT build
#   ours python compare
#   MODEL (resnet50), BATCH (32), STEPS (10), CACHE_DIR (OUT_DIR/cache: our compiled packages)
set -euo pipefail
out=$1; shift
model=${MODEL:-resnet50}
batch=${BATCH:-32}
steps=${STEPS:-10}
runner=build-gpu/experiment_runner
mkdir -p "$out"
trace_of() {  # trace_of DYNAMO: our last profiled repeat's trace of that backend
  local found
  found=$(ls "$out/ours/$model"/1/trace-cuda-"$1"-*.json 2>/dev/null | head -1)
  [ -n "$found" ] || { echo "no trace of ours $1 under $out/ours/$model/1 (run the ours step)" >&2; exit 1; }
  echo "$found"
}
ours_step() {  # ours_step NAME FLAGS...: our inductor and cudagraphs train step into OUT_DIR/NAME
  local name=$1; shift
  "$runner" --suite-name=torchbench --filter="^$model\$" --batch-size="$batch" \
    --accelerator=cuda --xla=None --dynamo=inductor --dynamo=cudagraphs --test=train \
    --repeat=2 --iterations-per-run="$steps" --no-resume "$@" \
    --output-dirname="$out/$name" --cache-dir="${CACHE_DIR:-$out/cache}" \
    > "$out/$name.log" 2>&1 || { tail -30 "$out/$name.log"; exit 1; }
}
for step in "$@"; do
  echo "=== $step $(date +%T)"
  case $step in
    build) bench/build_gpu.sh "$out" experiment_runner ;;
    ours)
      ours_step ours --dump-pytorch-profiles
      python3 - "$out/ours/results.jsonl" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    m = r["metrics"]
    times = m.get("per_iter_time") or []
    print(r["experiment"]["dynamo"], "median ms/step",
          round(sorted(times)[len(times) // 2] * 1e3, 3) if times else m.get("error", "")[:200])
EOF
      ;;
    python)
      spec=$(printf '{"model": "%s", "device": "cuda", "batch": %d, "warm_calls": 3, "variants": ["python_eager", "python_compile", "python_reduce_overhead"]}' "$model" "$batch")
      printf '{"cmd": "time", "iters": %d, "repeats": 3}\n{"cmd": "profile", "iters": %d, "dir": "%s"}\n{"cmd": "exit"}\n' \
        "$steps" "$steps" "$out/python" |
        python3 bench/train_step_python.py --spec "$spec" > "$out/python.jsonl" 2> "$out/python.log" ||
        { tail -30 "$out/python.log"; exit 1; }
      cat "$out/python.jsonl"
      ;;
    compare)
      python3 bench/train_kernels.py \
        "ours_inductor=$(trace_of inductor):$steps" "ours_cudagraphs=$(trace_of cudagraphs):$steps" \
        "python_reduce_overhead=$out/python/python_reduce_overhead.json:$steps" \
        "python_compile=$out/python/python_compile.json:$steps" \
        "python_eager=$out/python/python_eager.json:$steps" | tee "$out/kernels.md"
      ;;
    memory)
      ours_step memory --dump-memory-snapshot
      for snapshot in "$out/memory/$model"/memory-snapshot-*.pickle; do
        echo "## $(basename "$snapshot")"
        python3 bench/memory_snapshot_peak.py "$snapshot" --top 30
      done | tee "$out/memory.md"
      ;;
    *) echo "unknown step $step (build, ours, python, compare, memory)" >&2; exit 2 ;;
  esac
done
