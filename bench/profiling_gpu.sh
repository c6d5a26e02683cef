#!/bin/bash
# Profiling on the GPU machine (BENCHMARKS.md, "Other measurements"): a profiled sweep of three models under
# eager and cudagraphs (Kineto traces and tables, CPU/CUDA times, per-op times, CUPTI), then the
# check that CUPTI's kernel time per iteration agrees with the per-iteration wall time of a
# cudagraphs run of GPU-bound models, and inductor's IR dumps for one model.
# Usage: bench/profiling_gpu.sh OUT_DIR   (expects build-gpu/experiment_runner)
set -euo pipefail
out=$1
mkdir -p "$out"
build=build-gpu
models='^(resnet50|densenet121|hf_GPT2)$'
"$build/experiment_runner" --suite-name=torchbench --accelerator=cuda --xla=None --dynamo=None \
  --dynamo=cudagraphs --test=eval --filter="$models" --repeat=5 --iterations-per-run=20 \
  --dump-pytorch-profiles --profile-cuda-cpu --profile-cuda-cpu-individual-ops --profile-cupti \
  --output-dirname="$out/profiled" > "$out/profiled.log" 2>&1 || { tail -30 "$out/profiled.log"; exit 1; }
"$build/experiment_runner" --suite-name=torchbench --accelerator=cuda --xla=None --dynamo=inductor \
  --test=eval --filter='^resnet50$' --repeat=3 --save-ir-format=text --dump-hlo \
  --collect-dynamo-counters --cache-dir="$out/cache" --output-dirname="$out/ir" > "$out/ir.log" 2>&1 \
  || { tail -30 "$out/ir.log"; exit 1; }
python3 - "$out" <<'PY'
import glob, json, statistics, sys
out = sys.argv[1]
print(f"{'model':12} {'backend':10} {'per_iter ms':>11} {'kernel/iter':>11} {'busy/iter':>10} {'busy/wall':>9} {'kernels/iter':>12} {'cpu/iter ms':>11} {'cuda/iter ms':>12}")
for r in (json.loads(l) for l in open(f"{out}/profiled/results.jsonl")):
    m = r["metrics"]
    name, backend = r["model"]["model_name"], r["experiment"]["dynamo"] or "eager"
    if "error" in m:
        print(name, backend, "ERROR", m["error"][:200]); continue
    med = lambda k: statistics.median(m[k][1:] if len(m[k]) > 1 else m[k])
    wall, kern, busy = med("per_iter_time"), med("cupti_per_iter_kernel_time_s"), med("cupti_per_iter_busy_time_s")
    print(f"{name:12} {backend:10} {wall*1e3:11.3f} {kern*1e3:11.3f} {busy*1e3:10.3f} {busy/wall:9.3f} "
          f"{med('cupti_kernel_count')/r['iterations_per_run']:12.0f} {med('per_iter_cpu_time_s')*1e3:11.3f} {med('per_iter_cuda_time_s')*1e3:12.3f}")
    print("   busy/iter per repeat ms:", [round(b*1e3, 3) for b in m["cupti_per_iter_busy_time_s"]],
          " wall/iter:", [round(t*1e3, 3) for t in m["per_iter_time"]], " dropped:", m["cupti_dropped_records"])
    top = m["cupti_top_kernels"][0]
    print("   top kernel:", top["name"][:100], top["calls"], f"{top['time_s']*1e3:.3f} ms")
traces = glob.glob(f"{out}/profiled/*/*/trace-*.json")
bad = []
for t in traces:
    try:
        ev = json.load(open(t))["traceEvents"]
        assert any(e.get("cat") == "kernel" for e in ev), "no kernel events"
    except Exception as e:
        bad.append((t, str(e)[:100]))
print(f"{len(traces)} traces, {len(bad)} unreadable or without kernels: {bad[:3]}")
ir = [json.loads(l) for l in open(f"{out}/ir/results.jsonl")][0]
print("inductor counters:", json.dumps(ir["metrics"].get("dynamo_counters")), "ir_note:", ir["metrics"].get("ir_note"))
print("hlo files:", sorted(p.split("/")[-1][-30:] for p in glob.glob(f"{out}/ir/resnet50/hlo-*/*"))[:8])
print("dump text lines:", sum(1 for _ in open(glob.glob(f"{out}/ir/resnet50/dump-*.text")[0])))
PY
table=$(ls "$out"/profiled/resnet50/0/pytorch-profile-cuda-cudagraphs-*.txt | head -1)
head -14 "$table"; tail -3 "$table"
table=$(ls "$out"/profiled/resnet50/0/pytorch-profile-cuda-None-*.txt | head -1)
head -12 "$table"; tail -3 "$table"
