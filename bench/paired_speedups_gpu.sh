#!/bin/bash
# Issue 24's done-when check of --paired-baseline on the GPU machine: three separate sweeps, one
# after another, of the launch-bound models hf_Bert, llama, mobilenet_v2 and resnet18 with
# `--dynamo=None --dynamo=cudagraphs --paired-baseline=eager`. Each sweep gives per model
#   paired:   the cudagraphs record's paired.speedup (eager and cudagraphs alternated repeat by
#             repeat in one child): median [low, high] of the per-pair speedups;
#   unpaired: the eager config's own child (it is the baseline itself, so it runs unpaired) against
#             the cudagraphs child's own repeats: median eager per_iter / median cudagraphs
#             per_iter over the counted repeats (repeat 0 left out), with a bootstrap 95% interval
#             of that ratio of medians (as core/median_interval's bootstrap_ratio_of_medians) —
#             the speedup aggregate and the report computed before paired records existed.
# The verdict: paired figures agree when, per model, the three intervals overlap and the medians are
# within 5% of each other; the unpaired ratios of the same runs are judged by the same rule.
# Usage: bench/paired_speedups_gpu.sh OUT_DIR [STEP...]   steps: build, sweeps, analyze
#   (default: sweeps analyze). MODELS=regex, SWEEPS=n (3), REPEAT (10), ITERATIONS (20) override;
#   BUILD_DIR (build-gpu) is where `build` puts experiment_runner.
set -euo pipefail
out=$1; shift
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(sweeps analyze)
build=${BUILD_DIR:-build-gpu}
models=${MODELS:-^(hf_Bert|llama|mobilenet_v2|resnet18)$}
sweeps=${SWEEPS:-3}
repeat=${REPEAT:-10}
iterations=${ITERATIONS:-20}
mkdir -p "$out"
for step in "${steps[@]}"; do
  echo "=== $step $(date +%T)"
  case $step in
    build)
      BUILD_DIR="$build" bench/build_gpu.sh "$out" experiment_runner
      ;;
    sweeps)
      for i in $(seq 1 "$sweeps"); do
        echo "--- sweep $i $(date +%T)"
        "$build/experiment_runner" --suite-name=torchbench --accelerator=cuda --xla=None \
          --dynamo=None --dynamo=cudagraphs --test=eval --filter="$models" \
          --paired-baseline=eager --repeat="$repeat" --iterations-per-run="$iterations" \
          --output-dirname="$out/sweep-$i" --no-resume > "$out/sweep-$i.log" 2>&1 ||
          { echo "sweep $i failed:"; tail -20 "$out/sweep-$i.log"; }
        echo "sweep $i: $(grep -c '"paired": ' "$out/sweep-$i/results.jsonl" || true) paired record(s)"
      done
      ;;
    analyze)
      python3 - "$out" "$sweeps" <<'PYTHON'
import json, math, os, random, statistics, sys

out, sweeps = sys.argv[1], int(sys.argv[2])

def counted(values):
    values = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return values[1:] if len(values) > 1 else values

def ratio_interval(baseline, experiment, resamples=4000, confidence=0.95):
    """median(baseline) / median(experiment) and a percentile-bootstrap interval (fixed seed)."""
    rng = random.Random(0x5EEDB00757A91E55)
    ratios = sorted(statistics.median(rng.choices(baseline, k=len(baseline))) /
                    statistics.median(rng.choices(experiment, k=len(experiment)))
                    for _ in range(resamples))
    def quantile(p):
        rank = p * (len(ratios) - 1)
        below = math.floor(rank)
        above = min(below + 1, len(ratios) - 1)
        return ratios[below] + (ratios[above] - ratios[below]) * (rank - below)
    point = statistics.median(baseline) / statistics.median(experiment)
    return point, quantile((1 - confidence) / 2), quantile((1 + confidence) / 2)

paired, unpaired = {}, {}  # model -> [(median, low, high) per sweep]
for i in range(1, sweeps + 1):
    path = os.path.join(out, f"sweep-{i}", "results.jsonl")
    if not os.path.exists(path):
        print(f"sweep {i}: no {path}")
        continue
    records = [json.loads(line) for line in open(path) if line.strip()]
    by_config = {(r["model"]["model_name"], r["experiment"]["dynamo"]): r for r in records}
    for (model, dynamo), record in sorted(by_config.items(), key=lambda item: item[0][0]):
        if dynamo != "cudagraphs":
            continue
        if "error" in record["metrics"]:
            print(f"sweep {i} {model}: cudagraphs record is an error: {record['metrics']['error']}")
            continue
        s = record["paired"]["speedup"]
        paired.setdefault(model, []).append((s["median"], s["low"], s["high"]))
        eager = by_config.get((model, None))
        if eager and "error" not in eager["metrics"]:
            unpaired.setdefault(model, []).append(ratio_interval(
                counted(eager["metrics"]["per_iter_time"]), counted(record["metrics"]["per_iter_time"])))

def steal_share(record):
    """The hypervisor's share of the host's CPU time between the record's machine_state
    snapshots (/proc/stat steal), or None where the record lacks the ticks."""
    state = record.get("machine_state") or {}
    ticks = [(state.get(k) or {}).get("host", {}).get("cpu_ticks") for k in ("start", "end")]
    if not all(ticks) or ticks[1]["total"] <= ticks[0]["total"]:
        return None
    return (ticks[1]["steal"] - ticks[0]["steal"]) / (ticks[1]["total"] - ticks[0]["total"])

def probe(record):
    """The host speed probe at the record's start (ms; core/machine_state), or None."""
    return ((record.get("machine_state") or {}).get("start") or {}).get("host", {}).get(
        "speed_probe_ms")

print("host during each child: eager per_iter median (ms) of the paired child's baseline side, "
      "steal % of host CPU time, host speed probe at start (ms), noise verdict")
eager_vs_probe = []
for i in range(1, sweeps + 1):
    path = os.path.join(out, f"sweep-{i}", "results.jsonl")
    if not os.path.exists(path):
        continue
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        m = r["metrics"]
        if "error" in m:
            continue
        side = m.get("baseline_per_iter_time") or m["per_iter_time"]
        steal = steal_share(r)
        print(f"  sweep {i} {r['model']['model_name']:<13} {str(r['experiment']['dynamo']):<10} "
              f"eager-side {statistics.median(counted(side)) * 1e3:7.3f} ms "
              f"(min {min(counted(side)) * 1e3:.3f})  steal "
              f"{'n/a' if steal is None else f'{steal * 100:.2f}%'}  probe {probe(r)}  "
              f"noise {r.get('noise', {}).get('verdict')}")
        if probe(r):
            eager_vs_probe.append((r['model']['model_name'], statistics.median(counted(side)),
                                   probe(r)))
for model in sorted({m for m, _, _ in eager_vs_probe}):
    pairs = [(e, p) for m, e, p in eager_vs_probe if m == model]
    if len(pairs) >= 3 and len({p for _, p in pairs}) > 1 and len({e for e, _ in pairs}) > 1:
        print(f"  {model}: correlation of eager-side median with the speed probe over "
              f"{len(pairs)} children: {statistics.correlation(*zip(*pairs)):+.2f}; probe "
              f"{min(p for _, p in pairs):.3f}-{max(p for _, p in pairs):.3f} ms")

def agree(figures):
    """Intervals all overlap and medians within 5% of each other."""
    if len(figures) < 2:
        return False
    overlap = max(low for _, low, _ in figures) <= min(high for _, _, high in figures)
    medians = [m for m, _, _ in figures]
    return overlap and max(medians) / min(medians) - 1 <= 0.05

def text(figures):
    return "  ".join(f"{m:.3f} [{l:.3f}, {h:.3f}]" for m, l, h in figures)

print(f"{'model':<14} {'kind':<9} per sweep: median [95% interval]  -> spread of medians, verdict")
paired_ok = unpaired_ok = 0
for model in sorted(set(paired) | set(unpaired)):
    for kind, table in (("paired", paired), ("unpaired", unpaired)):
        figures = table.get(model, [])
        medians = [m for m, _, _ in figures]
        spread = (max(medians) / min(medians) - 1) * 100 if medians else float("nan")
        ok = agree(figures) and len(figures) == sweeps
        if ok:
            paired_ok += kind == "paired"
            unpaired_ok += kind == "unpaired"
        print(f"{model:<14} {kind:<9} {text(figures)}  -> {spread:.1f}%, "
              f"{'agree' if ok else 'DISAGREE'}")
models = len(set(paired) | set(unpaired))
met = models > 0 and paired_ok == models
print(f"VERDICT: paired agree for {paired_ok}/{models} models, unpaired for {unpaired_ok}/{models} "
      f"(agree: {sweeps} intervals overlap, medians within 5%); done-when "
      f"{'MET' if met and unpaired_ok < models else 'NOT MET'}"
      f"{' (paired agree, but so do unpaired: the machine was quiet)' if met and unpaired_ok == models else ''}")
PYTHON
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
