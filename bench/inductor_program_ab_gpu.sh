#!/bin/bash
# What the inductor backend compiles of an imported model, A/B on the GPU machine (issue 25:
# "inductor from the exported program directly, no TS2EP round trip"; BENCHMARKS.md "Inductor's
# program"): the forward exported by torch.export in the import helper (exported,
# the default) against the TorchScript program traced by LibTorch and converted by TS2EPConverter
# (traced, BENCHMATRIX_INDUCTOR_PROGRAM=traced, the path before eee2099). Steps, in order:
#   build     configure and build experiment_runner into build-gpu (bench/build_gpu.sh)
#   prefetch  the models' programs into the import cache, IMPORT_JOBS at a time
#             (bench/any_model_coverage.py prefetch --sweep=inductor: the compiler eval program
#             with its exported.pt2, and the eager eval pair the verifier runs)
#   exported, traced   one inductor eval sweep of the models with that program, --cold-start
#             (every package compiled with empty Inductor and Triton caches, so the two compile
#             times compare), --compile-ahead=COMPILE_AHEAD, --verify --verify-deterministic
#   rounds    ROUNDS interleaved rounds (exported, traced, exported, traced, ...) of timed
#             children on the compiled packages (cache hits), REPEAT repeats each, no verifier
#   pt2       a user's .pt2 on the GPU: bench/nativert_programs.py's BERT (2 layers, 4x64 tokens)
#             as --suite-name=exported --model-path=.../model.pt2, eager eval (torch::nativert)
#             and inductor eval, --verify
#   table     bench/inductor_program_ab.py's table of what ran (OUT_DIR/ab.md)
# Usage: bench/inductor_program_ab_gpu.sh OUT_DIR STEP...
#   MODELS=a,b     models of the huggingface and timm_models lists (default: BertForMaskedLM,
#                  GPT2ForSequenceClassification, mobilenetv2_100, deit_tiny_patch16_224.fb_in1k);
#   IMPORT_JOBS    import processes at once (default 4); COMPILE_AHEAD packages compiled at once
#                  (default 4); ROUNDS (default 2); REPEAT timed repeats per child (default 5);
#   CHILD_TIMEOUT_S  seconds per child (default 400).
# Work stays in WORK (default /tmp/inductor_ab; a warm machine's next call continues it: the
# runner resumes its results files); OUT_DIR gets the records (records-<step>.jsonl), the table
# and the runners' log tails (sweeps.log).
set -euo pipefail
out=$1; shift
mkdir -p "$out"
build=${BUILD_DIR:-build-gpu}
work=${WORK:-/tmp/inductor_ab}
models=${MODELS:-BertForMaskedLM,GPT2ForSequenceClassification,mobilenetv2_100,deit_tiny_patch16_224.fb_in1k}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export BENCHMATRIX_CONFIG_DIR="$PWD/configs"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$work/cache" "$work/run"

# The chosen models of one suite as an anchored --filter; empty when the suite has none.
suite_filter() {
  python3 - "$1" "$models" <<'PY'
import re, sys
sys.path.insert(0, "bench")
from any_model_coverage import chosen_models
names = [m for s, m, _ in chosen_models("configs", sys.argv[2]) if s == sys.argv[1]]
if names:
    print("^(" + "|".join(re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", n) for n in names) + ")$")
PY
}

# runner NAME PROGRAM ARGS...: the models' inductor eval, both suites, with PROGRAM, into
# $work/run/NAME/<suite>.
runner() {
  local name=$1 program=$2; shift 2
  for suite in huggingface timm_models; do
    local filter; filter=$(suite_filter "$suite")
    [ -n "$filter" ] || continue
    echo "--- $name: $suite ($program) $(date +%T)"
    BENCHMATRIX_INDUCTOR_PROGRAM=$program "$build/experiment_runner" \
      --suite-name="$suite" --filter="$filter" --accelerator=cuda --xla=None --dynamo=inductor \
      --test=eval --no-memory-pass --subprocess-timeout="${CHILD_TIMEOUT_S:-400}" \
      --cache-dir="$work/cache" --output-dirname="$work/run/$name/$suite" "$@" \
      >> "$work/run/$name.log" 2>&1 || echo "$name $suite: runner exit $? (see sweeps.log)"
  done
}

for step in "$@"; do
  echo "=== $step $(date +%T)"
  case $step in
    build) BUILD_DIR="$build" bench/build_gpu.sh "$out" experiment_runner ;;
    prefetch)
      python3 bench/any_model_coverage.py prefetch --config-dir=configs --models="$models" \
        --device=cuda --sweep=inductor --cache-dir="$work/cache/imported" \
        --jobs="${IMPORT_JOBS:-4}" --deadline=$(( $(date +%s) + 400 )) \
        --out="$work/run/prefetch.jsonl" > "$out/prefetch.txt" 2>&1 ||
        { echo "prefetch failed:"; tail -20 "$out/prefetch.txt"; }
      ;;
    exported | traced)
      runner "$step" "$step" --cold-start --compile-ahead="${COMPILE_AHEAD:-4}" \
        --repeat="${REPEAT:-5}" --verify --verify-deterministic
      ;;
    rounds)
      for round in $(seq 1 "${ROUNDS:-2}"); do
        for program in exported traced; do
          runner "round$round-$program" "$program" --repeat="${REPEAT:-5}" --no-resume
        done
      done
      ;;
    pt2)
      python3 bench/nativert_programs.py "$work/pt2" --shape 4,64 > "$out/pt2.txt" 2>&1
      echo "--- pt2 $(date +%T)"
      "$build/experiment_runner" --suite-name=exported --model-path="$work/pt2/model.pt2" \
        --accelerator=cuda --xla=None --dynamo=None --dynamo=inductor --test=eval --test=train \
        --repeat="${REPEAT:-5}" --verify --no-memory-pass --cache-dir="$work/cache" \
        --output-dirname="$work/run/pt2/exported" >> "$work/run/pt2.log" 2>&1 ||
        echo "pt2: runner exit $? (see sweeps.log)"
      ;;
    table)
      for dir in "$work"/run/*/; do
        name=$(basename "$dir")
        cat "$dir"/*/results.jsonl 2>/dev/null > "$out/records-$name.jsonl" || true
      done
      python3 bench/inductor_program_ab.py "$out" | tee "$out/ab.md"
      for log in "$work"/run/*.log; do echo "##### $log"; tail -30 "$log"; done > "$out/sweeps.log"
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
