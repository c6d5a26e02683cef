#!/bin/bash
# Issue 52's table: MODELS x PRECISIONS x {eager, inductor default, inductor max-autotune}, eval,
# --verify, in one experiment_runner sweep; then, on CUDA, Python's torch.compile of the very graphs
# the inductor packages were compiled from (bench/torch_compile_anchor.py: eager, default,
# reduce-overhead, max-autotune, per precision), and the table (bench/precision_modes_table.py):
# per model and precision, each side's median step time, compile time and peak memory, and the
# verification codes.
# Steps, in order (resumable: the sweep skips the configs already recorded):
#   build    bench/build_gpu.sh (build-gpu/experiment_runner)
#   run      the sweep into OUT_DIR/results.jsonl (its compiles into OUT_DIR/cache)
#   anchor   torch_compile_anchor.py over OUT_DIR/cache into OUT_DIR/anchor.jsonl (CUDA only)
#   table    OUT_DIR/table.md
# Usage: bench/precision_modes.sh OUT_DIR STEP...
#   MODELS=regex (default: five zoo models), PRECISIONS="float32 bfloat16 amp" (default),
#   ACCELERATOR=cpu|cuda (default cuda where nvidia-smi lists a GPU), REPEAT (default 10),
#   BATCH=N: one batch size for every model (default: each model's own),
#   RUNNER=path (default build-gpu/experiment_runner, else build/experiment_runner),
#   SECONDS_BUDGET=N: stop the sweep after N seconds (default 540; the next call resumes it)
set -euo pipefail
out=$1; shift
models=${MODELS:-'^(resnet50|hf_GPT2|mobilenet_v2|timm_vision_transformer|dcgan)$'}
precisions=${PRECISIONS:-float32 bfloat16 amp}
if [ -z "${ACCELERATOR:-}" ]; then
  ACCELERATOR=cpu
  nvidia-smi -L > /dev/null 2>&1 && ACCELERATOR=cuda
fi
runner=${RUNNER:-build-gpu/experiment_runner}
[ -x "$runner" ] || runner=build/experiment_runner
mkdir -p "$out"
batch_flags=()
[ -n "${BATCH:-}" ] && batch_flags=("--batch-size=$BATCH")
precision_flags=()
for p in $precisions; do precision_flags+=("--precision=$p"); done
for step in "$@"; do
  case $step in
    build) bench/build_gpu.sh "$out" experiment_runner ;;
    run)
      timeout --signal=INT "${SECONDS_BUDGET:-540}" "$runner" --suite-name=torchbench -k "$models" \
        --accelerator="$ACCELERATOR" --xla=None --dynamo=None --dynamo=inductor --test=eval \
        "${precision_flags[@]}" "${batch_flags[@]}" --inductor-mode=default --inductor-mode=max-autotune \
        --repeat="${REPEAT:-10}" --verify --output-dirname="$out" --cache-dir="$out/cache" \
        > "$out/sweep.log" 2>&1 || echo "run: stopped (status $?), resumes next call"
      echo "run: $(wc -l < "$out/results.jsonl" 2>/dev/null || echo 0) records" ;;
    anchor)
      [ "$ACCELERATOR" = cuda ] || { echo "anchor: CUDA only (torch_compile_anchor.py)"; continue; }
      python3 bench/torch_compile_anchor.py "$out/cache" \
        --modes=eager,compile,compile_ro,compile_ma >> "$out/anchor.jsonl" ;;
    table) python3 bench/precision_modes_table.py "$out" > "$out/table.md"; cat "$out/table.md" ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
