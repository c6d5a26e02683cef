#!/bin/bash
# The real TorchBench on the GPU machine (issue 49, BENCHMARKS.md "The real TorchBench checkout"):
# every model of a pytorch/benchmark checkout carried in the working tree (.torchbench_checkout/:
# `git archive HEAD torchbenchmark utils userbenchmark/dynamo/dynamobench` of a clone, the
# last for the model lists torchbenchmark/util/framework/huggingface reads; not committed) through experiment_runner
# --suite-name=torchbench --torchbench-dir, random weights (the machine has no network), --verify.
# Resumes: each step appends to OUT_DIR/<column>/results.jsonl and skips the configs already there,
# so calls that end at the device's time limit pick up where the last stopped.
# Carry third_party_cache and .torchbench_checkout, and build-gpu-carry where it was made
# (bench/build_gpu.sh --carry: the runner built on the build machine, no build here).
# Steps, in order:
#   build      configure and build experiment_runner into build-gpu (bench/build_gpu.sh)
#   eager      eager eval (OUT_DIR/eager) and train (OUT_DIR/eager_train), --verify (the
#              columns' SKIPs say why a model does not run)
#   inductor   inductor eval, --verify
#   table      the coverage table of the three columns (bench/torchbench_checkout_table.py)
# Usage: bench/torchbench_checkout_gpu.sh OUT_DIR STEP...
#   CHECKOUT=path (default .torchbench_checkout), FILTER=regex (default: every model),
#   SECONDS_BUDGET=N: stop starting new columns after N seconds (default 540),
#   CACHE_DIR=path: the imports and compiled packages (default OUT_DIR/cache),
#   RETRY_FAILED=1: run the error records again (--retry-failed: models the import helper has
#   learnt to build since, e.g. mnasnet1_0 and the untraceable models' SKIPs of 2026-12-06),
#   COMPILE_AHEAD=N: the inductor column imports and compiles N models at once before its timed
#   sweep (--compile-ahead; default 0: a call cut at the device's limit while compiling ahead
#   keeps no record, and the next call's fresh machine has lost the compiles: on 2026-12-07 two
#   calls of COMPILE_AHEAD=2 timed nothing in two of three parts; with 0 each record lands as its
#   model is done),
#   PARALLEL=1: the eager eval, eager train and inductor columns run at once (a coverage call: the columns' timings
#   share the machine and are not for comparison; their verdicts and SKIPs are unaffected),
#   SEED_DIR=path: a folder of an earlier run (its */results.jsonl, e.g.
#   bench/results/torchbench_checkout) whose records each new column folder starts from, so the
#   sweep resumes them (bench/torchbench_checkout_seed.py: only the records of this machine's GPU
#   model, which alone resume), less the models SEED_EXCLUDE (a regex) names,
#   SWEEP_FLAGS="...": more experiment_runner flags for every column (e.g. --verify-deterministic:
#   PyTorch's accuracy harness's deterministic kernels, for dlrm's and hf_Albert's train
#   NONDETERMINISTIC_EAGER_RUN on the H100),
#   HF_CONFIGS=dir: HUB_ID/config.json files (bench/hf_configs) made into an HF cache under
#   OUT_DIR/hf_home for the hf_* models (bench/hf_cache_from_configs.py; HF_HOME points there),
#   DISK_GUARD_GB=N: while the cache's disk has under N GB free, its oldest entries are removed
#   (bench/disk_guard.sh; default 12, 0 turns it off),
#   PARTS=N: each column as N sweeps of contiguous parts of the model list (--total-partitions,
#   folders NAME_p0 ... NAME_pN-1; with PARALLEL=1 all at once); keep N across resumed calls
set -euo pipefail
out=$1; shift
checkout=${CHECKOUT:-.torchbench_checkout}
filter=${FILTER:-.}
budget=${SECONDS_BUDGET:-540}
runner=build-gpu/experiment_runner
start=$SECONDS
column() {  # column NAME FLAGS...: one sweep, cut at the budget (resume picks it up next call)
  local name=$1; shift
  local left=$(( budget - (SECONDS - start) ))
  [ "$left" -gt 30 ] || { echo "$name: no time left in this call"; return 0; }
  mkdir -p "$out/$name"
  local sweep=("$runner" --suite-name=torchbench --torchbench-dir="$checkout" --random-weights
               --accelerator=cuda --xla=None --repeat=5 --verify -k "$filter"
               --output-dirname="$out/$name" --cache-dir="${CACHE_DIR:-$out/cache}" ${SWEEP_FLAGS:-} "$@")
  if [ -n "${SEED_DIR:-}" ] && [ ! -s "$out/$name/results.jsonl" ]; then
    "${sweep[@]}" --dry-run 2>&1 |
      SEED_GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) \
        python3 bench/torchbench_checkout_seed.py "$SEED_DIR" "$out/$name/results.jsonl"
  fi
  timeout --signal=INT "$left" "${sweep[@]}" ${RETRY_FAILED:+--retry-failed} > "$out/$name/sweep.log" 2>&1 ||
    echo "$name: stopped (status $?), resumes next call"
  echo "$name: $(wc -l < "$out/$name/results.jsonl" 2>/dev/null || echo 0) records"
}
if [ -n "${HF_CONFIGS:-}" ]; then
  python3 bench/hf_cache_from_configs.py "$HF_CONFIGS" "$out/hf_home"
  export HF_HOME=$(realpath -m "$out/hf_home")
fi
if [ "${DISK_GUARD_GB:-12}" != 0 ]; then
  mkdir -p "${CACHE_DIR:-$out/cache}"
  bench/disk_guard.sh "${CACHE_DIR:-$out/cache}" "${DISK_GUARD_GB:-12}" $(( ${DISK_GUARD_GB:-12} + 8 )) &
  guard=$!
  trap 'kill $guard 2>/dev/null' EXIT
fi
parts=${PARTS:-1}
parted_column() {  # parted_column NAME FLAGS...: PARTS sweeps of contiguous parts of the model list
  local name=$1; shift
  if [ "$parts" = 1 ]; then run_column column "$name" "$@"; return; fi
  for part in $(seq 0 $(( parts - 1 ))); do
    run_column column "${name}_p$part" --total-partitions="$parts" --partition-id="$part" "$@"
  done
}
wait_for_columns() {  # every column's sweep, not the disk guard
  local job
  for job in $(jobs -p); do [ "$job" = "${guard:-}" ] || wait "$job"; done
}
run_column() {  # in the background under PARALLEL=1, else now
  if [ -n "${PARALLEL:-}" ]; then "$@" & else "$@"; fi
}
for step in "$@"; do
  case $step in
    build) bench/build_gpu.sh "$out" experiment_runner ;;
    eager)  # eval and train as two sweeps (two results files), so PARALLEL=1 runs them at once
      parted_column eager --dynamo=None --test=eval
      parted_column eager_train --dynamo=None --test=train ;;
    inductor) parted_column inductor --dynamo=inductor --test=eval --compile-ahead="${COMPILE_AHEAD:-0}" ;;
    table) wait_for_columns; python3 bench/torchbench_checkout_table.py "$out" > "$out/table.md"; cat "$out/table.md" ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
wait_for_columns
