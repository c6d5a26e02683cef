#!/bin/bash
# The train-step bench on the GPU machine (issue 28, BENCHMARKS.md "Train step"). Steps, in order:
#   build   configure and build experiment_runner into build-gpu (as bench/compiled_backends_gpu.sh)
#   verify  --verify of our eager and cudagraphs train step on CUDA; the cudagraphs records must
#           have no compile.capture_fallback (the whole step captured)
#   bench   bench/train_step_anchor.py: our eager/cudagraphs train and Python eager /
#           torch.compile(step, mode="reduce-overhead") interleaved, plus CUPTI GPU-busy
# Usage: bench/train_step_gpu.sh OUT_DIR STEP...   (about 5 minutes for verify+bench on an H100)
#   MODELS=a,b picks the bench's models (default resnet50,resnet18,mobilenet_v2);
#   PYTHON_VARIANTS=python_eager skips the reduce-overhead compile (a breadth run); ANCHOR_ARGS
#   passes more options to train_step_anchor.py (e.g. "--repeats 3 --iters 10");
#   VERIFY_MODELS=regex the verified ones.
set -euo pipefail
out=$1; shift
mkdir -p "$out"
build=build-gpu
for step in "$@"; do
  echo "=== $step $(date +%T)"
  case $step in
    build)
      BUILD_DIR="$build" bench/build_gpu.sh "$out" experiment_runner
      ;;
    verify)
      models='^(resnet18|resnet50|hf_GPT2|mobilenet_v2|timm_vision_transformer|hf_Bert)$'
      "$build/experiment_runner" --suite-name=torchbench --accelerator=cuda --xla=None \
        --filter="${VERIFY_MODELS:-$models}" \
        --dynamo=None --dynamo=cudagraphs --test=train --repeat=2 --verify \
        --output-dirname="$out/verify" --no-resume > "$out/verify.log" 2>&1 || true
      python3 - "$out/verify/results.jsonl" <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    print(f"{r['model']['model_name']:24} {r['experiment']['dynamo'] or 'eager':10} "
          f"{r.get('verification_code')!s:24} fallback: "
          f"{r.get('compile', {}).get('capture_fallback', 'none')[:160]}")
PY
      ;;
    bench)
      python3 bench/train_step_anchor.py "$build/experiment_runner" "$out/bench" \
        --models="${MODELS:-resnet50,resnet18,mobilenet_v2}" \
        --python-variants="${PYTHON_VARIANTS:-python_eager,python_reduce_overhead}" \
        ${ANCHOR_ARGS:-} > "$out/bench.jsonl" \
        2> "$out/bench.log" || { tail -30 "$out/bench.log"; exit 1; }
      grep -v '^{' "$out/bench.jsonl"
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "=== done $(date +%T)"
