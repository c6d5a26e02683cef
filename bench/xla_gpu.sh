#!/bin/bash
# The XLA/PJRT backend on the GPU machine (BENCHMARKS.md, "Coverage of each suite"): dummy and a few
# torchbench models x {eager, inductor, openxla (xla=PJRT)} x eval, with --verify, then the table
# (per-iteration time, compile time, XLA execute time, verification code). Steps, in the order given
# (each device call has 10 minutes, so split them over calls):
#   build   configure and build experiment_runner into build-gpu (ninja, Hopper), with the PJRT C API
#           header from third_party_cache/pjrt and torchax from third_party_cache/python (both made
#           by scripts/fetch_pjrt_header.sh on a machine with PyPI; carry third_party_cache)
#   dummy   the dummy model, every backend (quick: checks the plugin loads and PASSes)
#   run     the torchbench models (MODELS=regex to choose; the cache makes a rerun cheap;
#           BACKENDS="--dynamo=None --dynamo=openxla" to leave inductor out)
#   export  the StableHLO export of every selected model into the cache, 4 models at a time
#           (BENCHMATRIX_XLA_EXPORT_ONLY; the export is CPU-bound Python), so that `run` times
#           the GPU and not four exports in a row
#   extras  dummy with --dump-hlo (XLA's dumps listed) and --torch-xla2=torch_export
#   table   the table of every record so far
# Usage: bench/xla_gpu.sh OUT_DIR STEP...
# Env: BENCHMATRIX_PJRT_PLUGIN=/path/xla_cuda_plugin.so (default: found through python3's
#      jax_plugins.xla_cuda13), BENCHMATRIX_PYTHON (the export helper's Python: torch 2.11 and jax),
#      TESTS (default "--test=eval"; "--test=train" for the joint train step, "--test=eval
#      --test=train" for both).
set -euo pipefail
out=$1; shift
mkdir -p "$out"
build=build-gpu
cache=$build/compile_cache
models=${MODELS:-'^(resnet18|resnet50|mobilenet_v2|squeezenet1_1|alexnet|hf_Bert|nanogpt)$'}
backends=${BACKENDS:-"--dynamo=None --dynamo=inductor --dynamo=openxla"}
tests=${TESTS:-"--test=eval"}
runner() { "$build/experiment_runner" --accelerator=cuda --xla=None --xla=PJRT $backends \
             $tests --repeat=5 --iterations-per-run=10 \
             --verify --cache-dir="$cache" --output-dirname="$out/results" "$@"; }
for step in "$@"; do
  echo "=== $step $(date +%T)"
  case $step in
    build)
      test -f third_party_cache/pjrt/include/xla/pjrt/c/pjrt_c_api.h \
        || { echo "no third_party_cache/pjrt: run scripts/fetch_pjrt_header.sh where PyPI is reachable and carry third_party_cache"; exit 1; }
      export TORCH_CUDA_ARCH_LIST=9.0
      cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')" \
        > "$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
      grep -i 'pjrt' "$out/cmake.log" || true
      cmake --build "$build" -j16 --target experiment_runner > "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
      python3 -c 'import jax, jax_plugins.xla_cuda13 as p; print("jax", jax.__version__, p.__file__)' || true
      PYTHONPATH=third_party_cache/python python3 -c 'import torchax; print("torchax", torchax.__file__)'
      ;;
    dummy)
      runner --suite-name=dummy > "$out/dummy.log" 2>&1 || { tail -40 "$out/dummy.log"; exit 1; }
      tail -8 "$out/dummy.log"
      ;;
    run)
      runner --suite-name=torchbench --filter="$models" > "$out/run.log" 2>&1 || { tail -40 "$out/run.log"; exit 1; }
      tail -20 "$out/run.log"
      ;;
    export)
      for p in 0 1 2 3; do
        BENCHMATRIX_XLA_EXPORT_ONLY=1 "$build/experiment_runner" --accelerator=cuda \
          --suite-name=torchbench --filter="$models" --xla=PJRT --dynamo=openxla $tests \
          --repeat=1 --total-partitions=4 --partition-id=$p --cache-dir="$cache" \
          --output-dirname="$out/export-$p" > "$out/export-$p.log" 2>&1 &
      done
      wait
      cat "$out"/export-*/results.jsonl | python3 -c '
import json, sys
for r in map(json.loads, sys.stdin):
    print(r["model"]["model_name"], r["metrics"].get("error", "")[-160:].replace("\n", " "))'
      ;;
    extras)
      for axis in "--dynamo=openxla --dump-hlo" "--dynamo=None --torch-xla2=torch_export --save-ir-format=hlo"; do
        "$build/experiment_runner" --accelerator=cuda --suite-name=dummy --xla=PJRT $axis --test=eval \
          --repeat=3 --iterations-per-run=10 --verify --cache-dir="$cache" \
          --output-dirname="$out/extras" > "$out/extras.log" 2>&1 || { tail -40 "$out/extras.log"; exit 1; }
      done
      for d in "$out"/extras/dummy/hlo-*; do
        echo "$d: $(ls "$d" | wc -l) files, e.g. $(ls "$d" | grep -m2 'txt$' | tr '\n' ' ')"
      done
      for f in "$out"/extras/dummy/dump-*; do echo "$f:"; head -5 "$f"; done
      python3 - "$out/extras/results.jsonl" <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    m = r["metrics"]
    print(r["experiment"]["dynamo"], r["experiment"]["torch_xla2"], r["verification_code"],
          m.get("error", "")[:200], m.get("ir_note", ""), "xla_CompileTime_number" in m)
PY
      ;;
    table)
      python3 - "$out/results/results.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
name = lambda r: ("torch_xla2" if r["experiment"]["torch_xla2"] else "openxla") if r["experiment"]["xla"] \
    else (r["experiment"]["dynamo"] or "eager")
print(f"{'model':16} {'backend':9} {'test':5} {'bs':>4} {'ms/iter med':>11} {'min':>8} {'max':>8} {'compile s':>9} "
      f"{'xla exec ms/iter':>16} {'verify':20} note")
for r in sorted(rows, key=lambda r: (r["model"]["model_name"], r["experiment"]["test"], name(r))):
    m = r["metrics"]
    if r["experiment"]["xla"] and not r["experiment"]["dynamo"] and not r["experiment"]["torch_xla2"]:
        continue  # the lazy-tensor SKIP
    head = f"{r['model']['model_name']:16} {name(r):9} {r['experiment']['test']:5} {r['experiment'].get('batch_size') or m.get('batch_size') or '':>4}"
    if "error" in m:
        print(f"{head} {'':>11} {'':>8} {'':>8} {'':>9} {'':>16} {r['verification_code']:20} {m['error'][:150]!r}")
        continue
    per = [t * 1e3 for t in m["per_iter_time"]]
    xla = ""
    if "xla_ExecuteTime_time_s" in m:
        n = sum(m["xla_ExecuteTime_number"]) or 1
        xla = f"{sum(m['xla_ExecuteTime_time_s']) / n * 1e3:.3f}"
    compile_s = m.get('compile_time_s', 0)  # a list, the value in repeat 0 (earlier: a number)
    compile_s = compile_s[0] if isinstance(compile_s, list) else compile_s
    verification = r.get('verification') or m.get('verification') or {}  # earlier: in metrics
    print(f"{head} {statistics.median(per):11.3f} {min(per):8.3f} {max(per):8.3f} "
          f"{compile_s:9.1f} {xla:>16} {r['verification_code']:20} "
          f"{verification.get('max_abs_error', '')}")
PY
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
