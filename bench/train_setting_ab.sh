#!/bin/bash
# A/B of one on/off switch of the inductor train step's compile (issue 50), SETTING=0 against
# SETTING=1:
#   BENCHMATRIX_TRAIN_PARTITION (the default): the joint graph compiled as traced against
#     partitioned as torch.compile partitions it (python/benchmatrix_compile/joint_partition.py);
#   BENCHMATRIX_CONV_BACKWARD_LAYOUT: the joint graph's traced NCHW strides for
#     convolution_backward against channels-last where Inductor lays the convolutions out so
#     (conv_backward_layout.py).
# Each setting compiles into a cache of its own with --verify (the record says whether the step
# still matches eager), then ROUNDS interleaved timing sweeps from those caches (1 first, then 0).
# Prints per model and setting the median of every counted per-iteration time, each sweep's
# median, the peak memory (device memory allocated on CUDA, the child's peak RSS on the CPU; MB)
# and the compile's seconds.
# Usage: bench/train_setting_ab.sh OUT_DIR
#   SETTING (BENCHMATRIX_TRAIN_PARTITION), MODELS (regex, default ^(resnet50|resnet18)$),
#   BATCH (4), ACCELERATOR (cpu), ROUNDS (2),
#   RUNNER (build/experiment_runner; build-gpu/experiment_runner on the GPU machine)
set -euo pipefail
out=$1
models=${MODELS:-^(resnet50|resnet18)\$}
variable=${SETTING:-BENCHMATRIX_TRAIN_PARTITION}
runner=${RUNNER:-build/experiment_runner}
mkdir -p "$out"
sweep() {  # sweep SETTING NAME [FLAG...]
  local setting=$1 name=$2; shift 2
  env "$variable=$setting" "$runner" --suite-name=torchbench --filter="$models" \
    --batch-size="${BATCH:-4}" --accelerator="${ACCELERATOR:-cpu}" --xla=None --dynamo=inductor \
    --test=train --repeat=5 --iterations-per-run=2 --no-resume "$@" \
    --output-dirname="$out/$name" --cache-dir="$out/cache$setting" > "$out/$name.log" 2>&1 ||
    { tail -20 "$out/$name.log"; exit 1; }
}
for setting in 0 1; do sweep "$setting" "compile$setting" --verify; done
for round in $(seq 1 "${ROUNDS:-2}"); do
  for setting in 1 0; do sweep "$setting" "round${round}_$setting"; done
done
python3 - "$out" "$variable" <<'EOF'
import glob, json, os, statistics, sys
out = sys.argv[1]
runs = {}
for path in sorted(glob.glob(os.path.join(out, "*_[01]/results.jsonl")) +
                   glob.glob(os.path.join(out, "compile[01]/results.jsonl"))):
    setting = os.path.basename(os.path.dirname(path))[-1]
    for line in open(path):
        record = json.loads(line)
        key = (record["model"]["model_name"], setting)
        metrics = record["metrics"]
        times = [t * 1e3 for t in metrics.get("per_iter_time", [])]
        entry = runs.setdefault(key, {"times": [], "sweeps": [], "verify": None, "peak": [],
                                      "compile": None})
        entry["times"] += times
        peaks = metrics.get("peak_device_allocated_bytes") or metrics.get("peak_host_rss_bytes") or []
        entry["peak"] += [p / 1e6 for p in peaks]
        if times:
            entry["sweeps"].append(round(statistics.median(times), 1))
        if os.path.basename(os.path.dirname(path)).startswith("compile"):  # the --verify sweep
            entry["verify"] = record.get("verification_code")
            seconds = metrics.get("compile_time_s") or [None]
            entry["compile"] = seconds[0] if isinstance(seconds, list) else seconds
print(f"| model | {sys.argv[2]} | median ms/iter | each sweep's median | peak MB | compile s | --verify |")
print("|---|---|---|---|---|---|---|")
for (model, setting), entry in sorted(runs.items()):
    median = round(statistics.median(entry["times"]), 1) if entry["times"] else "-"
    peak = round(max(entry["peak"])) if entry["peak"] else "-"
    print(f"| {model} | {setting} | {median} | {entry['sweeps']} | {peak} | {entry['compile']} "
          f"| {entry['verify']} |")
EOF
