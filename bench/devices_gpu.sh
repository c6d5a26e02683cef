#!/bin/bash
# Scale-out benchmark on a 2-GPU machine (BENCHMARKS.md, "Other measurements"): the same sweep with
# --devices 0 and with --devices 0,1, their wall times, and compare_runs between them (per-config
# results must agree within noise). Assumes build-gpu/ from `bench/compiled_backends_gpu.sh OUT build`
# plus compare_runs (built here).
# Usage: bench/devices_gpu.sh OUT_DIR    MODELS=regex BACKENDS="None cudagraphs" override the sweep.
set -euo pipefail
out=$1
mkdir -p "$out"
build=build-gpu
models=${MODELS:-^(alexnet|resnet18|resnet50|mobilenet_v2|densenet121|squeezenet1_1|hf_Bert|hf_GPT2|nanogpt|dcgan|timm_vision_transformer|llama)$}
backends=${BACKENDS:-None cudagraphs}
cmake --build "$build" -j16 --target compare_runs > "$out/build-compare.log" 2>&1 || { tail -30 "$out/build-compare.log"; exit 1; }
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
sweep() {  # NAME DEVICES [extra flags]
  local name=$1 devices=$2; shift 2
  local start end
  start=$(date +%s.%N)
  "$build/experiment_runner" --suite-name=torchbench --accelerator=cuda --xla=None \
    $(printf -- '--dynamo=%s ' $backends) --test=eval --filter="$models" --repeat=10 \
    --iterations-per-run=20 --devices="$devices" --output-dirname="$out/$name" --no-resume "$@" \
    > "$out/$name.log" 2>&1
  end=$(date +%s.%N)
  echo "$name (--devices $devices $*): $(python3 -c "print(f'{$end - $start:.1f}')") s wall"
}
sweep one-gpu 0
sweep two-gpus 0,1 --expected-times="$out/one-gpu/results.jsonl"
python3 - "$out" <<'PY'
import json, sys
for name in ("one-gpu", "two-gpus"):
    records = [json.loads(l) for l in open(f"{sys.argv[1]}/{name}/results.jsonl")]
    errors = [r["model"]["model_name"] for r in records if "error" in r["metrics"]]
    beside = [r["placement"]["children_beside"] for r in records]
    devices = sorted({r["placement"]["device"] for r in records})
    models = sorted({r["experiment"]["accelerator_model"] for r in records})
    print(f"{name}: {len(records)} records, errors {errors}, devices {devices}, "
          f"children_beside max {max(beside)}, accelerator_model {models}")
PY
"$build/compare_runs" "$out/one-gpu/results.jsonl" "$out/two-gpus/results.jsonl" \
  > "$out/compare.txt" 2>&1 || true
cat "$out/compare.txt"
cp "$out"/*.log "$out/compare.txt" "$out/one-gpu/results.jsonl" "$out/" 2>/dev/null || true
