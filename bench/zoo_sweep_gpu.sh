#!/bin/bash
# The whole TorchBench zoo on the GPU machine, compiled ahead (issues 22, 23, 26, 28; BENCHMARKS.md
# "Train step", "Compile time, cold and warm", "Memory"). Steps, in the order given:
#   build         configure and build experiment_runner and aggregate into build-gpu
#   compile-cold  inductor eval of every model with --cold-start --compile-ahead=$JOBS: the
#                 whole-zoo cold compile's wall time (the phase's "ready in" line) and each
#                 model's cold compile (compile.ahead), then a short timed sweep that loads them
#   eval          {eager, cudagraphs, inductor} x eval with the memory pass: step times, peak
#                 memory and compression ratios (the cache from compile-cold makes inductor a hit)
#   train         {inductor, openxla} x train with --verify (after VERIFY_ITERATIONS steps,
#                 default 2 as PyTorch's accuracy harness: README, --verify-iterations), the
#                 memory pass and --compile-ahead=$JOBS for the train packages
#                 (TRAIN_BACKENDS="inductor" etc. picks the compiled backends)
#   train-eager   {eager, cudagraphs} x train with the memory pass, without --verify (their
#                 whole-zoo --verify is bench/train_step_gpu.sh's verify step)
#   table         every record so far: verification, step time, peak memory, compile figures
# eval and train resume: their results live in build-gpu/zoo/ (kept while the machine stays warm)
# and each stops at BUDGET seconds (default: what is left of 570 s since the script started), so a
# step cut short is finished by running the same step again in the next device call. Results are
# copied to OUT_DIR after every step.
# Usage: bench/zoo_sweep_gpu.sh OUT_DIR STEP...   JOBS (default 8) compile-only children at once;
#   MODELS=regex limits the models (default: all); REPEAT (default 3) timed repeats per config.
set -uo pipefail
out=$1; shift
mkdir -p "$out"
build=build-gpu
work=$build/zoo
cache=$build/zoo_cache
jobs=${JOBS:-8}
started=$(date +%s)
left() { echo $(( ${BUDGET:-570} - ($(date +%s) - started) )); }
runner() {
  local name=$1; shift
  local budget; budget=$(left)
  if [ "$budget" -lt 30 ]; then echo "no time left for $name"; return 0; fi
  timeout --signal=TERM --kill-after=30 "$budget" "$build/experiment_runner" \
    --suite-name=torchbench --accelerator=cuda --filter="${MODELS:-.}" --repeat="${REPEAT:-3}" \
    --cache-dir="$cache" --output-dirname="$work/$name" "$@" >> "$work/$name.log" 2>&1
  echo "$name: exit $? after $(( $(date +%s) - started )) s; $(wc -l < "$work/$name/results.jsonl" 2>/dev/null || echo 0) records"
  cp "$work/$name/results.jsonl" "$out/$name.jsonl" 2>/dev/null
  grep -E "compile-ahead" "$work/$name.log" | grep -v "\] .*: ready in" | tail -5
  grep -E "not compiled ahead" "$work/$name.log" | tail -20
}
mkdir -p "$work"
for step in "$@"; do
  echo "=== $step $(date +%T)"
  case $step in
    build)
      BUILD_DIR="$build" bench/build_gpu.sh "$out" experiment_runner aggregate || exit 1
      ;;
    compile-cold)
      rm -rf "$work/compile-cold" "$work/compile-cold.log"
      runner compile-cold --xla=None --dynamo=inductor --test=eval --cold-start \
        --compile-ahead="$jobs" --no-memory-pass --no-resume
      ;;
    eval)
      runner eval --xla=None --dynamo=None --dynamo=cudagraphs --dynamo=inductor --test=eval \
        --compile-ahead="$jobs"
      ;;
    train)
      runner train --xla=None --xla=PJRT \
        $(for b in ${TRAIN_BACKENDS:-inductor openxla}; do echo "--dynamo=$b"; done) \
        --test=train --verify --verify-iterations="${VERIFY_ITERATIONS:-2}" --compile-ahead="$jobs"
      ;;
    train-eager)
      runner train-eager --xla=None --dynamo=None --dynamo=cudagraphs --test=train
      ;;
    table)
      for name in compile-cold eval train train-eager; do
        [ -f "$work/$name/results.jsonl" ] || continue
        echo "--- $name"
        python3 bench/zoo_table.py "$work/$name/results.jsonl" | tee "$out/$name.txt"
      done
      for test in inference training; do
        echo "--- compression ratio, $test (eager peak / backend peak)"
        cat "$work"/{eval,train,train-eager}/results.jsonl 2>/dev/null > "$work/all.jsonl"
        "$build/aggregate" "$work/all.jsonl" --accelerator=cuda --test=$test \
          --backends eager inductor cudagraphs --report=memory_compression --format=tab || true
      done
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "=== done after $(( $(date +%s) - started )) s"
