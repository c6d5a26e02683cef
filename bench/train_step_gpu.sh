#!/bin/bash
# The train-step bench on the GPU machine (issues 23 and 28, BENCHMARKS.md "Train step"). Steps, in
# order:
#   build   configure and build experiment_runner into build-gpu (as bench/compiled_backends_gpu.sh;
#           openxla needs the PJRT header: carry third_party_cache, as bench/xla_gpu.sh says)
#   verify  --verify of our eager and cudagraphs train step on CUDA; the cudagraphs records must
#           have no compile.capture_fallback (the whole step captured)
#   zoo     bench/train_step_anchor.py over the whole zoo: our eager, cudagraphs, inductor and
#           openxla train step against Python eager, torch.compile(step) and
#           torch.compile(step, mode="reduce-overhead") (pip originals, or our exported graph where
#           there is none), warm-up phase first (every compile cache filled, WARM_JOBS at a time),
#           then interleaved rounds, CUPTI GPU-busy in the last round; the table on stdout, and
#           table.md, results.jsonl and zoo.tar.gz (every model's result, warm-up and round
#           records) in OUT_DIR. Its work folder ZOO_DIR (default build-gpu/trainzoo: git-ignored,
#           so it stays on the machine between device calls) keeps the caches and what is done:
#           each call stops before DEADLINE_S (default 540 s, inside a 600 s device command) and the
#           same command in the next call continues where it stopped. Rough H100 (16 cores)
#           figures, printed at the start of each call: warm-up 15-25 min for all 20 models,
#           timing about 45 s a model with 2 rounds (15 min), so 3-4 calls of 10 minutes on one
#           held machine (it goes back after 30 min held: build, then zoo calls back to back);
#           ROUNDS=1 halves the timing, MODELS=a,b takes a subset, WARM_JOBS=6 may warm faster.
#   bench   the same script over MODELS (default resnet50,resnet18,mobilenet_v2) and VARIANTS
#           (default all seven) in one call (no deadline; work folder build-gpu/trainbench,
#           files in OUT_DIR named trainbench.*).
# Usage: bench/train_step_gpu.sh OUT_DIR STEP...
#   e.g. call 1: bench/train_step_gpu.sh $OUT build zoo; calls 2-4: bench/train_step_gpu.sh $OUT zoo
#   MODELS=a,b the models (zoo: default every torchbench model); VARIANTS=a,b of ours_eager,
#   ours_cudagraphs, ours_inductor, ours_openxla, python_eager, python_compile,
#   python_reduce_overhead; ROUNDS, WARM_JOBS, DEADLINE_S, ZOO_DIR as above; ANCHOR_ARGS passes
#   more options to train_step_anchor.py (e.g. "--repeats 5 --iters 20"); VERIFY_MODELS=regex the
#   verified ones.
set -euo pipefail
out=$1; shift
mkdir -p "$out"
build=build-gpu
anchor() {  # anchor WORK_DIR OPTION...: the bench's tables on stdout, its log in OUT_DIR
  local work=$1; shift
  python3 bench/train_step_anchor.py "$build/experiment_runner" "$work" \
    --variants="${VARIANTS:-ours_eager,ours_cudagraphs,ours_inductor,ours_openxla,python_eager,python_compile,python_reduce_overhead}" \
    --rounds="${ROUNDS:-2}" --warm-jobs="${WARM_JOBS:-4}" ${ANCHOR_ARGS:-} "$@" \
    > "$out/$(basename "$work").out" 2> >(tee -a "$out/$(basename "$work").log" >&2) \
    || { echo "train_step_anchor.py failed"; exit 1; }
  grep -v '^{' "$out/$(basename "$work").out"
  cp "$work/table.md" "$out/$(basename "$work").table.md"
  [ ! -f "$work/results.jsonl" ] || cp "$work/results.jsonl" "$out/$(basename "$work").jsonl"
  tar -czf "$out/$(basename "$work").tar.gz" -C "$work" --exclude='*.log' \
    timing warm/python $(cd "$work" && ls -d warm/ours/*/results.jsonl runs/*/*/results.jsonl \
                         2>/dev/null || true)
}
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
    zoo)
      work=${ZOO_DIR:-$build/trainzoo}
      mkdir -p "$(dirname "$work")"
      anchor "$work" --models="${MODELS:-zoo}" --deadline-s="${DEADLINE_S:-540}"
      ;;
    bench)
      anchor "$build/trainbench" --models="${MODELS:-resnet50,resnet18,mobilenet_v2}"
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "=== done $(date +%T)"
