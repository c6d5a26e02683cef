#!/bin/bash
# A/B of the inductor train step's convolution_backward layout (issue 50,
# python/benchmatrix_compile/conv_backward_layout.py): BENCHMATRIX_CONV_BACKWARD_LAYOUT=0 (the
# joint graph's traced NCHW strides) against 1 (channels-last where Inductor lays the
# convolutions out so, as torch.compile's backward). Each setting compiles into a cache of its own
# with --verify (the record says whether the step still matches eager), then ROUNDS interleaved
# timing sweeps from those caches (B first, then A). Prints per model and setting the median of
# every counted per-iteration time and each sweep's median.
# Usage: bench/conv_backward_layout_ab.sh OUT_DIR
#   MODELS (regex, default ^(resnet50|resnet18)$), BATCH (4), ACCELERATOR (cpu), ROUNDS (2),
#   RUNNER (build/experiment_runner; build-gpu/experiment_runner on the GPU machine)
set -euo pipefail
out=$1
models=${MODELS:-^(resnet50|resnet18)\$}
runner=${RUNNER:-build/experiment_runner}
mkdir -p "$out"
sweep() {  # sweep SETTING NAME [FLAG...]
  local setting=$1 name=$2; shift 2
  BENCHMATRIX_CONV_BACKWARD_LAYOUT=$setting "$runner" --suite-name=torchbench --filter="$models" \
    --batch-size="${BATCH:-4}" --accelerator="${ACCELERATOR:-cpu}" --xla=None --dynamo=inductor \
    --test=train --repeat=5 --iterations-per-run=2 --no-resume "$@" \
    --output-dirname="$out/$name" --cache-dir="$out/cache$setting" > "$out/$name.log" 2>&1 ||
    { tail -20 "$out/$name.log"; exit 1; }
}
for setting in 0 1; do sweep "$setting" "compile$setting" --verify; done
for round in $(seq 1 "${ROUNDS:-2}"); do
  for setting in 1 0; do sweep "$setting" "round${round}_$setting"; done
done
python3 - "$out" <<'EOF'
import glob, json, os, statistics, sys
out = sys.argv[1]
runs = {}
for path in sorted(glob.glob(os.path.join(out, "*_[01]/results.jsonl")) +
                   glob.glob(os.path.join(out, "compile[01]/results.jsonl"))):
    setting = os.path.basename(os.path.dirname(path))[-1]
    for line in open(path):
        record = json.loads(line)
        key = (record["model"]["model_name"], setting)
        times = [t * 1e3 for t in record["metrics"].get("per_iter_time", [])]
        entry = runs.setdefault(key, {"times": [], "sweeps": [], "verify": None})
        entry["times"] += times
        if times:
            entry["sweeps"].append(round(statistics.median(times), 1))
        if os.path.basename(os.path.dirname(path)).startswith("compile"):  # the --verify sweep
            entry["verify"] = record.get("verification_code")
print("| model | setting | median ms/iter | each sweep's median | --verify |")
print("|---|---|---|---|---|")
for (model, setting), entry in sorted(runs.items()):
    median = round(statistics.median(entry["times"]), 1) if entry["times"] else "-"
    label = "0 (NCHW)" if setting == "0" else "1 (channels-last)"
    print(f"| {model} | {label} | {median} | {entry['sweeps']} | {entry['verify']} |")
EOF
