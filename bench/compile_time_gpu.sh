#!/bin/bash
# Inductor compile time on the GPU machine (issue 22; BENCHMARKS.md, "Compile time, cold and warm"). Steps, run in
# the order given (each device call has 10 minutes; every step but build fits in about 8 on 16 cores):
#   build     experiment_runner into build-gpu (as bench/compiled_backends_gpu.sh build)
#   cold      our cold compile (--cold-start: empty package cache and Inductor/Triton caches), one
#             model at a time; each record's compile.breakdown_s says where the time went
#   shared    the same models into a fresh package cache, without --cold-start, twice: the first
#             pass fills compiler-caches/ (what the first sweep after a torch update sees: models
#             share only the ISA probes and headers), the second pass, with the packages removed
#             but compiler-caches/ kept, is a recompile with warm FX-graph/Triton/autotune caches
#   hit       a rerun on the cold step's cache: a warm hit (load + CUDA-graph capture) per model
#   anchor    Python torch.compile (default mode) of the pip originals, each in a fresh process
#             with empty caches (bench/compile_time_anchor.py), same inputs as ours
#   wrapper   aot_inductor.compile_wrapper_opt_level O1 (Inductor's default) vs O0 (the helper's
#             default for CUDA forward packages): cold compile and paired per-iteration times (eager
#             baseline) for each, to see that the step time does not move
#   headers   precompiled headers built ahead off (BENCHMATRIX_HEADERS_AHEAD=0) and on (the CUDA
#             default), the compile helper alone on the cold step's graphs, cold, in ABBA rounds
#             (bench/compile_helper_ab.py; ROUNDS=2): headers_ab.table.md, headers_ab.jsonl
#   runtime   AOTInductor's runtime built apart off (BENCHMATRIX_RUNTIME_APART=0) and on (the
#             default), the helper alone on the cold step's graphs in ABBA rounds, the runtime
#             object kept from compile to compile as a sweep's shared caches keep it
#             (compile_helper_ab.py --keep; ROUNDS=2): runtime_ab.table.md, runtime_ab.jsonl
#   verify    --verify of every model on the cold step's cache (warm hits of the packages the
#             cold step built): one line per model with its verification code
#   firstcall a warm hit's first call taken apart: the torchvision originals' eager first call
#             (contiguous and channels_last, cuDNN on and off; bench/first_call_probe.py), then
#             the child's warm hit on the cold step's cache as is, with CUDA_MODULE_LOADING=EAGER
#             and with cuDNN's API log (below)
#   table     per model: our cold compile_time_s and its breakdown, Python's compile_s, the ratio
# Usage: bench/compile_time_gpu.sh OUT_DIR STEP...   (MODELS=a,b,c overrides the model list)
set -euo pipefail
out=$1; shift
mkdir -p "$out"
build=build-gpu
models=${MODELS:-resnet50,hf_GPT2,mobilenet_v3_large,nanogpt,hf_Bert}
filter="^(${models//,/|})$"
runner() { "$build/experiment_runner" --suite-name=torchbench --accelerator=cuda --xla=None \
             --filter="$filter" --dynamo=inductor --test=eval --no-resume "$@"; }
for step in "$@"; do
  echo "=== $step $(date +%T)"
  started=$(date +%s)
  case $step in
    build) bench/compiled_backends_gpu.sh "$out" build ;;
    cold)
      runner --cold-start --repeat=3 --cache-dir="$out/cache" --output-dirname="$out/cold" \
        --subprocess-timeout=600 > "$out/cold.log" 2>&1 || tail -20 "$out/cold.log"
      ;;
    shared)
      rm -rf "$out/shared-cache"
      for pass in 1 2; do
        runner --repeat=1 --cache-dir="$out/shared-cache" --output-dirname="$out/shared-$pass" \
          --subprocess-timeout=600 > "$out/shared-$pass.log" 2>&1 || tail -20 "$out/shared-$pass.log"
        # keep compiler-caches/, drop the packages: the second pass recompiles every model
        find "$out/shared-cache" -mindepth 1 -maxdepth 1 ! -name compiler-caches -exec rm -rf {} +
      done
      du -sh "$out/shared-cache/compiler-caches"
      ;;
    hit)
      runner --repeat=3 --cache-dir="$out/cache" --output-dirname="$out/hit" > "$out/hit.log" 2>&1 \
        || tail -20 "$out/hit.log"
      ;;
    anchor)
      python3 bench/compile_time_anchor.py "$out/cache" --models="$models" > "$out/anchor.jsonl" \
        2> "$out/anchor.log" || tail -30 "$out/anchor.log"
      cut -c1-200 "$out/anchor.jsonl"
      ;;
    wrapper)
      for level in O1 O0; do
        AOT_INDUCTOR_COMPILE_WRAPPER_OPT_LEVEL=$level runner --cold-start --repeat=10 \
          --iterations-per-run=20 --paired-baseline=eager --cache-dir="$out/wrapper-cache-$level" \
          --output-dirname="$out/wrapper-$level" > "$out/wrapper-$level.log" 2>&1 \
          || tail -20 "$out/wrapper-$level.log"
      done
      ;;
    headers)
      python3 bench/compile_helper_ab.py --device cuda --models "$models" --cache-dir "$out/cache" \
        --rounds "${ROUNDS:-2}" --a BENCHMATRIX_HEADERS_AHEAD=0 --b BENCHMATRIX_HEADERS_AHEAD= \
        --out "$out/headers_ab.jsonl" > "$out/headers_ab.table.md" 2> "$out/headers_ab.log" ||
        tail -20 "$out/headers_ab.log"
      cat "$out/headers_ab.table.md"
      ;;
    runtime)
      python3 bench/compile_helper_ab.py --device cuda --models "$models" --cache-dir "$out/cache" \
        --rounds "${ROUNDS:-2}" --a BENCHMATRIX_RUNTIME_APART=0 --b BENCHMATRIX_RUNTIME_APART= \
        --keep benchmatrix_aoti_runtime --out "$out/runtime_ab.jsonl" \
        > "$out/runtime_ab.table.md" 2> "$out/runtime_ab.log" || tail -20 "$out/runtime_ab.log"
      cat "$out/runtime_ab.table.md"
      ;;
    verify)
      runner --repeat=2 --verify --cache-dir="$out/cache" --output-dirname="$out/verify" \
        > "$out/verify.log" 2>&1 || tail -20 "$out/verify.log"
      python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["model"]["model_name"], r.get("verification_code"), "cache hit:",
          r.get("compile", {}).get("cache_hit"))' "$out/verify/results.jsonl"
      ;;
    firstcall)
      # 1. the torchvision originals of MODELS in eager, contiguous and channels_last (the layout
      #    Inductor gives a package's convolutions), cuDNN on and off, batch 8 as the packages,
      #    each in a fresh process (bench/first_call_probe.py --eager): firstcall.jsonl
      # 2. the child's own warm hit on the cold step's cache under environment variants, each a
      #    fresh child: as is; CUDA_MODULE_LOADING=EAGER (every kernel module loaded with the
      #    library, so a lazy-loading cost moves from the first call into the load); cuDNN's API
      #    log on (CUDNN_LOGLEVEL_DBG=3: its calls during the hit counted per model, the log's
      #    size the sign of engine builds): firstcall-<variant>/results.jsonl
      # (The probe's package mode, which loads an entry in Python, died with a segmentation fault
      # in the CUDA container runner's constructor on an H200 (2026-11-28), so the hit is taken
      # apart through the child here.)
      for model in ${models//,/ }; do
        python3 -c "import sys, torchvision; sys.exit('$model' not in torchvision.models.list_models())" \
          || continue
        for layout in contiguous channels_last; do
          for cudnn in on off; do
            python3 bench/first_call_probe.py --eager "$model" --memory-format "$layout" \
              --cudnn "$cudnn" --batch 8 >> "$out/firstcall.jsonl" 2>> "$out/firstcall.log" \
              || echo "first_call_probe.py --eager $model $layout cuDNN $cudnn: failed (firstcall.log)"
          done
        done
      done
      [ ! -f "$out/firstcall.jsonl" ] || python3 - "$out/firstcall.jsonl" <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    print(f"{r['model']!s:22} {r['source']:24} cudnn {r['cudnn']:3} "
          f"load {r['load_s']:.3f} s  first call {r['first_call_s']:.3f} s  "
          f"later {1000 * r['later_call_s']:.2f} ms")
PY
      for variant in as_is module_loading_eager cudnn_log; do
        case $variant in
          as_is) env=() ;;
          module_loading_eager) env=(CUDA_MODULE_LOADING=EAGER) ;;
          cudnn_log) env=(CUDNN_LOGLEVEL_DBG=3 "CUDNN_LOGDEST_DBG=$out/cudnn-api.log") ;;
        esac
        rm -f "$out/cudnn-api.log"
        (for setting in "${env[@]}"; do export "$setting"; done
         runner --repeat=1 --cache-dir="$out/cache" --output-dirname="$out/firstcall-$variant") \
          > "$out/firstcall-$variant.log" 2>&1 || tail -20 "$out/firstcall-$variant.log"
        python3 - "$out/firstcall-$variant/results.jsonl" "$variant" <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    p = r.get("compile", {}).get("preparation_s", {})
    print(f"{sys.argv[2]:22} {r['model']['model_name']:22} hit {r.get('compile', {}).get('cache_hit')} "
          f"load {p.get('load_s', float('nan')):.3f} s  first call "
          f"{p.get('first_call_s', float('nan')):.3f} s")
PY
        if [ "$variant" = cudnn_log ] && [ -f "$out/cudnn-api.log" ]; then
          # one sweep ran every model: its cuDNN API calls in all (per model needs MODELS=one)
          # cuDNN 9 logs each call as "function cudnnName() called:"
          echo "cuDNN API log: $(wc -l < "$out/cudnn-api.log") lines, $(grep -cE 'cudnn[A-Z][A-Za-z_]*\(\)' \
            "$out/cudnn-api.log" || true) calls; the most frequent:"
          grep -oE 'cudnn[A-Z][A-Za-z_]*\(\)' "$out/cudnn-api.log" | sort | uniq -c | sort -rn | head
          gzip -f "$out/cudnn-api.log"
        fi
      done
      ;;
    table)
      python3 - "$out" <<'EOF'
import glob, json, math, os, sys
out = sys.argv[1]
def records(step):
    path = os.path.join(out, step, "results.jsonl")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {r["model"]["model_name"]: r for r in map(json.loads, filter(str.strip, f))}
def anchors():
    path = os.path.join(out, "anchor.jsonl")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {a["model"]: a for a in map(json.loads, filter(str.strip, f))}
def first(record, metric):
    values = record.get("metrics", {}).get(metric)
    return values[0] if values else float("nan")
cold, hit, py = records("cold"), records("hit"), anchors()
shared = [records("shared-1"), records("shared-2")]
ratios = []
print(f"{'model':20} {'cold s':>7} {'helper':>7} {'py s':>6} {'ratio':>6} {'shared1':>7} "
      f"{'shared2':>7} {'hit s':>6}  breakdown (cold)")
for model in sorted(set(cold) | set(py)):
    c = cold.get(model, {})
    ours, python = first(c, "compile_time_s"), py.get(model, {}).get("compile_s", float("nan"))
    ratio = ours / python if python == python and ours == ours else float("nan")
    if ratio == ratio:
        ratios.append(ratio)
    breakdown = c.get("compile", {}).get("breakdown_s", {})
    print(f"{model:20} {ours:7.1f} {first(c, 'compile_helper_s'):7.1f} {python:6.1f} {ratio:6.2f} "
          f"{first(shared[0].get(model, {}), 'compile_time_s'):7.1f} "
          f"{first(shared[1].get(model, {}), 'compile_time_s'):7.1f} "
          f"{first(hit.get(model, {}), 'compile_time_s'):6.2f}  "
          + " ".join(f"{k.removesuffix('_s')}={v:.1f}" for k, v in breakdown.items() if v >= 0.1)
          + (f"  [freezing failed: {c['compile']['freezing_failure'][:60]}]"
             if c.get("compile", {}).get("freezing_failure") else ""))
if ratios:
    print(f"geomean ours/python: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}; "
          f"cold total {sum(first(r, 'compile_time_s') for r in cold.values()):.0f} s")
for level in ("O1", "O0"):
    for model, r in sorted(records(f"wrapper-{level}").items()):
        speedup = r.get("paired", {}).get("speedup", {})
        wrapper = r.get("compile", {}).get("breakdown_s", {}).get("cpp_wrapper_compile_s", math.nan)
        print(f"wrapper {level} {model:20} wrapper g++ {wrapper:5.1f} s  compile "
              f"{first(r, 'compile_time_s'):5.1f} s  speedup vs eager {speedup.get('median', math.nan):.3f} "
              f"[{speedup.get('low', math.nan):.3f}, {speedup.get('high', math.nan):.3f}]")
EOF
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
  echo "=== $step took $(( $(date +%s) - started )) s"
done
