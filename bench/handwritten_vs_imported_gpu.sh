#!/bin/bash
# Hand-written C++ models against the same models loaded as TorchScript programs (issue 25: "same
# step time within noise is the target"), on the GPU machine. Steps, in order:
#   build  configure and build experiment_runner into build-gpu (bench/build_gpu.sh)
#   pairs  bench/handwritten_twins.py traces the pip originals of MODELS (default resnet50,
#          hf_Bert, hf_GPT2) at the hand-written models' batch sizes, one program per test, then
#          ROUNDS (default 3) interleaved rounds: per round and test, one experiment_runner
#          invocation of the hand-written models (--suite-name=torchbench), then one of their
#          programs (--suite-name=exported --model-path=DIR/<test>), eager, REPEAT (default 6)
#          repeats of ITERS (default 10) steps, repeat 0 the warm-up; then the table: per model
#          and test, the median per-iteration time of each side over all rounds' counted repeats,
#          each round's median, and imported / hand-written. Both sides run the same precision
#          rule (eval: a bfloat16 cast; train: float16 autocast and Adam) and the same loss
#          (reduce_to_scalar_loss of the logits); the hand-written side's weights are its own
#          init, the program's the pip original's (random: step time does not depend on them).
#          Files in OUT_DIR: pairs.table.md, pairs.jsonl (every record).
#   profile  where a pair's gap is (H200 x4, 2026-11-28: imported hf_Bert 2x in eval, its program 316 ATen
#          nodes with no item() or mask arithmetic, and the interpreter adds 0.03 us per op on the
#          CPU, bench/interpreter_overhead.cpp): per side and test one experiment_runner run with
#          --profile-cupti --profile-cuda-cpu-individual-ops (the programs of `pairs`, traced
#          again when it did not run), then profile.table.md: per model, test and side the
#          kernels per iteration, kernel time, device busy time, wall time of the traced
#          iterations, the ATen calls per iteration and the five longest kernels; and
#          profile.jsonl (every record).
# Usage: bench/handwritten_vs_imported_gpu.sh OUT_DIR STEP...   (MODELS, REPEAT, ITERS, ROUNDS as above)
set -euo pipefail
out=$1; shift
mkdir -p "$out"
build=${BUILD_DIR:-build-gpu}
work=${WORK:-$build/handwritten_pairs}
accelerator=${ACCELERATOR:-cuda}
models=${MODELS:-resnet50,hf_Bert,hf_GPT2}
filter="^(${models//,/|})$"
common=(--accelerator="$accelerator" --xla=None --dynamo=None --no-memory-pass
        --cache-dir="$work/cache")
# One run of each side of the pairs for TEST with FLAGS...: the hand-written models
# (--suite-name=torchbench) into DIR-handwritten, then their programs (--suite-name=exported) into
# DIR-imported, both runners' output appended to LOG.
run_both_sides() {
  local test=$1 dir=$2 log=$3; shift 3
  "$build/experiment_runner" --suite-name=torchbench --filter="$filter" --test="$test" \
    "${common[@]}" "$@" --output-dirname="$dir-handwritten" >> "$log" 2>&1 ||
    echo "$(basename "$dir") hand-written: exit $?"
  "$build/experiment_runner" --suite-name=exported --model-path="$work/programs/$test" \
    --test="$test" "${common[@]}" "$@" --output-dirname="$dir-imported" >> "$log" 2>&1 ||
    echo "$(basename "$dir") imported: exit $?"
}

for step in "$@"; do
  echo "=== $step $(date +%T)"
  case $step in
    build)
      BUILD_DIR="$build" bench/build_gpu.sh "$out" experiment_runner
      ;;
    pairs)
      rm -rf "$work" && mkdir -p "$work"
      python3 bench/handwritten_twins.py "$work/programs" --models="$models" --device="$accelerator"
      timed=(--repeat="${REPEAT:-6}" --iterations-per-run="${ITERS:-10}" --no-resume)
      for round in $(seq 1 "${ROUNDS:-3}"); do
        for test in eval train; do
          run_both_sides "$test" "$work/runs/$round-$test" "$work/runs.log" "${timed[@]}"
        done
      done
      cat "$work"/runs/*/results.jsonl > "$out/pairs.jsonl"
      python3 - "$out/pairs.jsonl" "$out/pairs.table.md" <<'PY'
import collections, json, statistics, sys
per_round = collections.defaultdict(list)  # (model, test, side) -> [round medians, ms]
counted = collections.defaultdict(list)    # (model, test, side) -> counted repeats, ms
errors = {}
for r in map(json.loads, open(sys.argv[1])):
    side = "imported" if r.get("model_source") else "hand-written"
    key = (r["model"]["model_name"], r["experiment"]["test"], side)
    times = r["metrics"].get("per_iter_time") or []
    if len(times) < 2 or not isinstance(times[0], (int, float)):
        errors[key] = str(r["metrics"].get("error", "no timings"))[:160]
        continue
    values = [t * 1e3 for t in times[1:]]
    counted[key] += values
    per_round[key].append(statistics.median(values))
lines = ["| model | test | hand-written ms | imported ms | imported / hand-written | "
         "hand-written per round | imported per round | spread hand-written / imported |",
         "|---|---|---|---|---|---|---|---|"]
for model, test in sorted({(m, t) for m, t, _ in list(counted) + list(errors)}):
    a, b = (model, test, "hand-written"), (model, test, "imported")
    if a not in counted or b not in counted:
        lines.append(f"| {model} | {test} | {errors.get(a, '-')} | {errors.get(b, '-')} | | | | |")
        continue
    ma, mb = statistics.median(counted[a]), statistics.median(counted[b])
    spread = lambda k, m: f"{(max(counted[k]) - min(counted[k])) / m * 100:.1f}%"
    lines.append(f"| {model} | {test} | {ma:.3f} | {mb:.3f} | {mb / ma:.3f} | "
                 f"{', '.join(f'{v:.2f}' for v in per_round[a])} | "
                 f"{', '.join(f'{v:.2f}' for v in per_round[b])} | "
                 f"{spread(a, ma)} / {spread(b, mb)} |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
      ;;
    profile)
      [ -d "$work/programs" ] ||
        python3 bench/handwritten_twins.py "$work/programs" --models="$models" --device="$accelerator"
      rm -rf "$work/profiles"
      profiled=(--repeat=3 --iterations-per-run="${ITERS:-10}" --no-resume --profile-cupti
                --profile-cuda-cpu-individual-ops)
      for test in eval train; do
        run_both_sides "$test" "$work/profiles/$test" "$work/profiles.log" "${profiled[@]}"
      done
      cat "$work"/profiles/*/results.jsonl > "$out/profile.jsonl"
      python3 - "$out/profile.jsonl" "$out/profile.table.md" "${ITERS:-10}" <<'PY'
import json, sys
def last(values):
    return values[-1] if isinstance(values, list) and values else None
lines = ["| model | test | side | kernels / iter | kernel ms / iter | busy ms / iter | wall ms / iter "
         "| ATen calls / iter | five longest kernels (calls, ms per iter) |", "|---|---|---|---|---|---|---|---|---|"]
rows = []
for r in map(json.loads, open(sys.argv[1])):
    m, profile = r["metrics"], r.get("profile") or {}
    side = "imported" if r.get("model_source") else "hand-written"
    iters = int(sys.argv[3])  # the profiled repeats' steps: counts and top kernels are per repeat
    ms = lambda key: (f"{last(m.get(key)) * 1e3:.3f}" if last(m.get(key)) is not None else "-")
    ops = profile.get("eager_ops") or {}
    calls = sum(o.get("num_of_calls", 0) for o in ops.values()) if isinstance(ops, dict) else 0
    kernels = sorted(profile.get("cupti_top_kernels") or [], key=lambda k: -k.get("time_s", 0))[:5]
    top = "; ".join(f"{k.get('name', '?')[:60]} ({k.get('calls') / iters:g}, "
                    f"{k.get('time_s', 0) * 1e3 / iters:.3f})" for k in kernels)
    count = last(m.get("cupti_kernel_count"))
    count = count / iters if count is not None else None
    rows.append((r["model"]["model_name"], r["experiment"]["test"], side,
                 f"{count:.0f}" if count is not None else str(m.get("error", "-"))[:80],
                 ms("cupti_per_iter_kernel_time_s"), ms("cupti_per_iter_busy_time_s"),
                 ms("cupti_per_iter_time_s"), f"{calls / iters:.0f}" if calls else "-", top))
for row in sorted(rows):
    lines.append("| " + " | ".join(row) + " |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "=== done $(date +%T)"
