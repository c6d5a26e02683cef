#!/bin/bash
# The compiled-backends benchmark on the GPU machine (BENCHMARKS.md, "Inductor against Python
# torch.compile (eval)"). Steps, run in the order given (each device call has 10 minutes, so a run is
# split over several calls):
#   build       configure and build experiment_runner into build-gpu (ninja, Hopper)
#   check       --verify on CUDA for a few models, every backend, eval and train
#   prefill     AOTInductor packages for every model, 4 compiles at a time, into the cache
#   eval|train  the sweep: all models x {eager, cudagraphs, torchscript, inductor}, 10 repeats of 20
#               iterations each, one config at a time (the cache is warm, so no compile is timed)
#   anchor      bench/torch_compile_anchor.py on the cache's entries
# Usage: bench/compiled_backends_gpu.sh OUT_DIR STEP...
#   MODELS=regex restricts the models; BACKENDS="None cudagraphs" the sweep's --dynamo values.
set -euo pipefail
out=$1; shift
mkdir -p "$out"
build=build-gpu
cache=$build/compile_cache
models=${MODELS:-.}
backends=${BACKENDS:-None cudagraphs torchscript inductor}
runner() { "$build/experiment_runner" --suite-name=torchbench --accelerator=cuda --xla=None \
             --cache-dir="$cache" --filter="$models" "$@"; }
for step in "$@"; do
  echo "=== $step $(date +%T)"
  case $step in
    build)
      BUILD_DIR="$build" bench/build_gpu.sh "$out" experiment_runner
      ;;
    check)
      "$build/experiment_runner" --suite-name=dummy --accelerator=cuda --xla=None --cache-dir="$cache" \
        --dynamo=None --dynamo=cudagraphs --dynamo=torchscript --dynamo=inductor --test=eval --test=train \
        --repeat=3 --verify --output-dirname="$out/check" --no-resume 2>&1 | tail -12
      "$build/experiment_runner" --suite-name=torchbench --accelerator=cuda --xla=None --cache-dir="$cache" \
        --filter='^(resnet18|hf_Bert|nanogpt|dlrm|BERT_pytorch)$' --dynamo=cudagraphs --dynamo=torchscript \
        --test=eval --test=train --repeat=3 --verify --output-dirname="$out/check" 2>&1 | tail -24
      ;;
    prefill)
      for p in 0 1 2 3; do
        runner --dynamo=inductor --test=eval --repeat=1 --total-partitions=4 --partition-id=$p \
          --output-dirname="$out/prefill-$p" --subprocess-timeout=1200 > "$out/prefill-$p.log" 2>&1 &
      done
      wait
      cat "$out"/prefill-*/results.jsonl > "$out/prefill.jsonl"
      grep -h -A30 "^model" "$out"/prefill-*.log || true
      ;;
    eval|train)
      runner $(printf -- '--dynamo=%s ' $backends) --test=$step \
        --repeat=10 --iterations-per-run=20 --output-dirname="$out/sweep" > "$out/sweep-$step.log" 2>&1 || true
      grep -A200 "^model" "$out/sweep-$step.log" || grep -v "Run with" "$out/sweep-$step.log" | tail -20
      ;;
    anchor)
      python3 bench/torch_compile_anchor.py "$cache" ${ANCHOR_MODELS:+--models=$ANCHOR_MODELS} \
        > "$out/anchor.jsonl" 2> "$out/anchor.log" || tail -30 "$out/anchor.log"
      cat "$out/anchor.jsonl" | cut -c1-200
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "=== done $(date +%T)"
