#!/bin/bash
# The peak-memory bench on the GPU machine (issue 26, BENCHMARKS.md "Memory"). Steps, in order:
#   build   configure and build experiment_runner into build-gpu (as bench/train_step_gpu.sh)
#   zoo     experiment_runner over MODELS x {eager, cudagraphs, inductor} x {eval, train} on CUDA
#           (the memory pass on by default), then the peaks and compression ratios per config:
#           aggregate --report=memory_compression per test, and the records' memory keys
#   oom     eval at --batch-size=2048: hf_GPT2 cannot fit (its logits alone are 2048 x 1024 x 50257
#           floats, 431 GB), resnet18 can (about 7 GB at most per layer): hf_GPT2's error record
#           must start with "out of device memory" and resnet18, after it, must still run
#   anchor  bench/peak_memory_anchor.py: our eager peak against torch.cuda.max_memory_allocated()
#           of the pip originals at the same batch sizes
# Usage: bench/peak_memory_gpu.sh OUT_DIR STEP...   (zoo: about 10 minutes for the default models)
#   MODELS=a,b picks the models (default resnet50,hf_GPT2,hf_Bert,timm_vision_transformer);
#   BACKENDS="None cudagraphs" leaves inductor's compiles out of the zoo step.
set -euo pipefail
out=$1; shift
mkdir -p "$out"
build=build-gpu
models=${MODELS:-resnet50,hf_GPT2,hf_Bert,timm_vision_transformer}
regex="^(${models//,/|})\$"
for step in "$@"; do
  echo "=== $step $(date +%T)"
  case $step in
    build)
      BUILD_DIR="$build" bench/build_gpu.sh "$out" experiment_runner aggregate
      ;;
    zoo)
      "$build/experiment_runner" --suite-name=torchbench --accelerator=cuda --xla=None \
        --filter="$regex" $(for b in ${BACKENDS:-None cudagraphs inductor}; do echo "--dynamo=$b"; done) \
        --test=eval --test=train --repeat=4 --output-dirname="$out/zoo" --no-resume \
        > "$out/zoo.log" 2>&1 || true
      for test in inference training; do
        echo "--- compression ratio, $test (eager peak / backend peak)"
        "$build/aggregate" "$out/zoo/results.jsonl" --accelerator=cuda --test=$test \
          --backends eager inductor cudagraphs --report=memory_compression --format=tab || true
      done
      python3 - "$out/zoo/results.jsonl" <<'PY'
import json, statistics, sys
MIB = 1024 * 1024
def median(values):
    return statistics.median(values[1:] if len(values) > 1 else values)
# peak alloc: the record's figure (a CUDA graph config's: the larger of the pass's own peak,
# "pass", and the largest capture's, "capture": worker/memory_pass.hpp)
print(f"{'model':24} {'test':5} {'backend':10} {'peak alloc':>10} {'peak resv':>10} "
      f"{'resident':>9} {'params':>7} {'optim':>7} {'driver':>8} {'capture':>8} {'pass':>6}"
      "  (MiB)")
for r in map(json.loads, open(sys.argv[1])):
    m, e = r["metrics"], r["experiment"]
    name = f"{r['model']['model_name']:24} {e['test']:5} {e['dynamo'] or 'eager':10}"
    if "peak_device_allocated_bytes" not in m:
        print(f"{name} {str(m.get('error', 'no memory figures')).splitlines()[0][:90]}")
        continue
    mem, dev = r.get("memory", {}), r.get("memory", {}).get("device", {})
    replay = dev.get("pass_peak_allocated_bytes")
    def mib(v):
        return f"{v / MIB:.0f}" if isinstance(v, (int, float)) else "-"
    print(f"{name} {mib(median(m['peak_device_allocated_bytes'])):>10} "
          f"{mib(median(m['peak_device_reserved_bytes'])):>10} "
          f"{mib(dev.get('allocated_bytes_before_pass')):>9} {mib(mem.get('parameters_bytes')):>7} "
          f"{mib(mem.get('optimizer_state_bytes')):>7} {mib(dev.get('driver_used_bytes')):>8} "
          f"{mib(dev.get('capture_peak_allocated_bytes')):>8} "
          f"{mib(median(replay) if replay else None):>6}")
PY
      ;;
    oom)
      "$build/experiment_runner" --suite-name=torchbench --accelerator=cuda --xla=None \
        --filter='^(hf_GPT2|resnet18)$' --dynamo=None --test=eval --batch-size=2048 --repeat=2 \
        --output-dirname="$out/oom" --no-resume > "$out/oom.log" 2>&1 || true
      python3 - "$out/oom/results.jsonl" <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    m = r["metrics"]
    print(r["model"]["model_name"], "->", str(m.get("error", "ran: per_iter_time %s" %
                                                m.get("per_iter_time")))[:400])
PY
      ;;
    anchor)
      python3 bench/peak_memory_anchor.py "$build/experiment_runner" "$out/anchor" \
        --models="$models" > "$out/anchor.jsonl" 2> "$out/anchor.log" \
        || { tail -30 "$out/anchor.log"; exit 1; }
      grep -v '^{' "$out/anchor.jsonl"
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "=== done $(date +%T)"
