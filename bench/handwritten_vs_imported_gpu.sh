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
# Usage: bench/handwritten_vs_imported_gpu.sh OUT_DIR STEP...
set -euo pipefail
out=$1; shift
mkdir -p "$out"
build=${BUILD_DIR:-build-gpu}
work=${WORK:-$build/handwritten_pairs}
accelerator=${ACCELERATOR:-cuda}
for step in "$@"; do
  echo "=== $step $(date +%T)"
  case $step in
    build)
      BUILD_DIR="$build" bench/build_gpu.sh "$out" experiment_runner
      ;;
    pairs)
      rm -rf "$work" && mkdir -p "$work"
      models=${MODELS:-resnet50,hf_Bert,hf_GPT2}
      python3 bench/handwritten_twins.py "$work/programs" --models="$models" --device="$accelerator"
      filter="^(${models//,/|})$"
      common=(--accelerator="$accelerator" --xla=None --dynamo=None --repeat="${REPEAT:-6}"
              --iterations-per-run="${ITERS:-10}" --no-resume --no-memory-pass
              --cache-dir="$work/cache")
      for round in $(seq 1 "${ROUNDS:-3}"); do
        for test in eval train; do
          "$build/experiment_runner" --suite-name=torchbench --filter="$filter" --test="$test" \
            "${common[@]}" --output-dirname="$work/runs/$round-$test-handwritten" \
            >> "$work/runs.log" 2>&1 || echo "round $round $test hand-written: exit $?"
          "$build/experiment_runner" --suite-name=exported --model-path="$work/programs/$test" \
            --test="$test" "${common[@]}" --output-dirname="$work/runs/$round-$test-imported" \
            >> "$work/runs.log" 2>&1 || echo "round $round $test imported: exit $?"
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
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "=== done $(date +%T)"
