"""The tables of the train-step zoo bench (bench/train_step_anchor.py), from its per-model results.

Reads OUT_DIR/timing/<model>.json (one per timed model, written by the bench) and prints
  - the step table: per-iteration medians (ms) of each variant, our cudagraphs step over its CUPTI
    GPU-busy time, and the ratios ours eager / Python eager, ours inductor / Python compile
    (default mode) and / Python reduce-overhead, with their geometric means over the models that
    have both figures (issue 28's target: eager ratio geomean <= 0.90, every model <= 1; issue 23's:
    inductor / Python compile geomean <= 0.95);
  - the spread of each variant (max - min over the counted repeats, % of the median);
  - verification (our four backends, from the warm-up phase's --verify run) and compile seconds:
    our cold inductor and openxla compiles and Python's cold torch.compile (both in the warm-up
    phase, several compiles at once on a busy machine: an upper bound of an idle cold compile),
    and Python's compile in the timing process (shared caches warm: what a warm cache leaves);
  - every SKIP, error and note, by model.
The same tables go to OUT_DIR/table.md as markdown, ready for BENCHMARKS.md.
Usage: python3 bench/train_step_table.py OUT_DIR [--models a,b]   (the bench calls render()).
"""
import argparse
import json
import math
import os
import statistics
import sys

OURS = ("ours_eager", "ours_cudagraphs", "ours_inductor", "ours_openxla")
PYTHON = ("python_eager", "python_compile", "python_reduce_overhead")
VARIANTS = OURS + PYTHON
TITLES = {"ours_eager": "ours eager", "ours_cudagraphs": "ours cudagraphs",
          "ours_inductor": "ours inductor", "ours_openxla": "ours openxla",
          "python_eager": "Python eager", "python_compile": "Python compile",
          "python_reduce_overhead": "Python reduce-overhead"}
SHORT = {"ours_eager": "o.eager", "ours_cudagraphs": "o.cudagr", "ours_inductor": "o.induct",
         "ours_openxla": "o.openxla", "python_eager": "py.eager", "python_compile": "py.compile",
         "python_reduce_overhead": "py.r-o"}
# (numerator, denominator, column title, target line)
RATIOS = (("ours_eager", "python_eager", "eager / Py eager",
           "issue 28: geomean <= 0.90, every model <= 1"),
          ("ours_inductor", "python_compile", "inductor / Py compile",
           "issue 23: geomean <= 0.95, every model <= 1"),
          ("ours_inductor", "python_reduce_overhead", "inductor / Py r-o", ""))


def median(values):
    return statistics.median(values) if values else None


def load_results(out_dir, models):
    """{model: result} for the models with a timing file (in `models` order)."""
    results = {}
    for model in models:
        path = os.path.join(out_dir, "timing", model + ".json")
        if os.path.exists(path):
            with open(path) as f:
                results[model] = json.load(f)
    return results


def cell(variant_result):
    """A variant's median in ms, or its status where it has none ("-": not selected)."""
    if variant_result is None:
        return "-"
    if variant_result.get("per_iter_ms"):
        return f"{median(variant_result['per_iter_ms']):.3f}"
    return variant_result.get("status") or "not run"


def ratio(result, numerator, denominator):
    a = median(result["variants"].get(numerator, {}).get("per_iter_ms") or [])
    b = median(result["variants"].get(denominator, {}).get("per_iter_ms") or [])
    return a / b if a and b else None


def geomean(values):
    values = [v for v in values if v]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def memory_op_ms(result, variant="ours_cudagraphs"):
    """Median memcpy/memset milliseconds per iteration inside the busy time, or None (records
    before 2026-11-28 counted kernels only)."""
    values = result["variants"].get(variant, {}).get("memory_op_ms")
    return median(values) if values else None


def wall_over_busy(result, variant="ours_cudagraphs"):
    wall = median(result["variants"].get(variant, {}).get("per_iter_ms") or [])
    busy = median(result["variants"].get(variant, {}).get("busy_ms") or [])
    return (wall / busy if wall and busy else None), busy


def peak_mb(result, variant):
    """The variant's peak device memory in MB (ours: the memory pass's allocated peak, CUDA graph
    capture included; Python: its warm-up's allocated peak), or None."""
    peak = (result["variants"].get(variant) or {}).get("peak_allocated_bytes")
    return peak / 2**20 if peak else None


def memory_table(results):
    """Markdown lines of every variant's peak device memory per model, and the summary of issue
    50's target (ours inductor <= 1.1 x Python's compiled step, default and reduce-overhead)."""
    header = ["model"] + [TITLES[v] + " MB" for v in VARIANTS] + [
        "inductor / Py compile", "inductor / Py r-o"]
    md = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    over = {"python_compile": [], "python_reduce_overhead": []}
    for model, result in results.items():
        row = [f"{peak_mb(result, v):.0f}" if peak_mb(result, v) else "-" for v in VARIANTS]
        for python in over:
            ours, theirs = peak_mb(result, "ours_inductor"), peak_mb(result, python)
            value = ours / theirs if ours and theirs else None
            if value:
                over[python].append((model, value))
            row.append(f"{value:.2f}" if value else "-")
        md.append("| " + " | ".join([model] + row) + " |")
    summary = []
    for python, values in over.items():
        if values:
            above = [f"{m} {v:.2f}" for m, v in values if v > 1.1]
            summary.append(f"peak memory, ours inductor / {TITLES[python]}: within 1.1x on "
                           f"{len(values) - len(above)} of {len(values)} models"
                           + (f" (above: {', '.join(above)})" if above else "")
                           + " (issue 50's target: all)")
    return md, summary


def spread_percent(values):
    if not values or len(values) < 2:
        return None
    return (max(values) - min(values)) / statistics.median(values) * 100


def model_label(model, result):
    batch = result.get("batch")
    optimizer = result.get("optimizer") or "?"
    return f"{model} ({batch if batch else '?'}, {optimizer})"


def source_label(result):
    source = result.get("source") or "?"
    return {"pip original": "pip", "exported graph": "graph"}.get(source, source)


def notes_of(model, result):
    """One line per SKIP/error reason and note of the model."""
    lines = []
    for variant in VARIANTS:
        v = result["variants"].get(variant)
        if not v:
            continue
        if v.get("reason"):
            lines.append(f"{TITLES[variant]}: {v['status']}: {v['reason']}")
    for note in result.get("notes", []):
        lines.append(note)
    return lines


def compile_seconds(result):
    """(our inductor cold, our openxla cold, Python cold default/r-o, Python timing-process
    default/r-o) as strings."""
    warm = result.get("warm", {})
    ours = warm.get("ours", {})

    def ours_s(variant):
        entry = ours.get(variant) or {}
        if not entry.get("compile_time_s"):
            return "-"
        # a cache hit (an earlier run's package) is a load, not a cold compile
        return f"{entry['compile_time_s']:.1f}" + (" (hit)" if entry.get("cache_hit") else "")

    def python_s(phase, variant):
        entry = (result.get(phase) or {}).get(variant) or {}
        return f"{entry['warm_up_s']:.1f}" if "warm_up_s" in entry else "-"

    def hits(variant):
        if variant not in (result.get("timing_compile") or {}):
            return "-"
        cache = result["timing_compile"][variant].get("cache") or {}
        fx = cache.get("inductor.fxgraph_cache_hit", 0)
        fx_miss = cache.get("inductor.fxgraph_cache_miss", 0)
        aot = cache.get("aot_autograd.autograd_cache_hit", 0)
        aot_miss = cache.get("aot_autograd.autograd_cache_miss", 0)
        return f"{fx}/{fx + fx_miss} fx, {aot}/{aot + aot_miss} aot"

    return (ours_s("ours_inductor"), ours_s("ours_openxla"),
            f"{python_s('python_warm', 'python_compile')} / "
            f"{python_s('python_warm', 'python_reduce_overhead')}",
            f"{python_s('timing_compile', 'python_compile')} / "
            f"{python_s('timing_compile', 'python_reduce_overhead')}",
            f"{hits('python_compile')}; {hits('python_reduce_overhead')}")


def render(out_dir, models, meta=None, stream=sys.stdout):
    """Prints the tables and writes OUT_DIR/table.md. `meta`: the bench's settings line."""
    results = load_results(out_dir, models)
    missing = [m for m in models if m not in results]
    ratio_values = {title: [] for _, _, title, _ in RATIOS}
    text, md = [], []

    header = (["model (batch, optimizer)", "source"] + [TITLES[v] for v in VARIANTS]
              + ["cudagraphs busy", "of it memcpy/memset", "cudagraphs wall/busy"]
              + [t for _, _, t, _ in RATIOS])
    md.append("| " + " | ".join(header) + " |")
    md.append("|" + "---|" * len(header))
    text.append(f"{'model':24} {'src':5} " + " ".join(f"{SHORT[v]:>10}" for v in VARIANTS)
                + f" {'cg busy':>8} {'wall/bsy':>8} {'e/pe':>6} {'i/pc':>6} {'i/pro':>6}")
    for model, result in results.items():
        cells = [cell(result["variants"].get(v)) for v in VARIANTS]
        over_busy, busy = wall_over_busy(result)
        ratios = []
        for numerator, denominator, title, _ in RATIOS:
            value = ratio(result, numerator, denominator)
            ratio_values[title].append(value)
            ratios.append(f"{value:.3f}" if value else "-")
        busy_text = f"{busy:.3f}" if busy else "-"
        memory_ops = memory_op_ms(result)
        memory_text = f"{memory_ops:.3f}" if memory_ops is not None else "-"
        over_text = f"{over_busy:.3f}" if over_busy else "-"
        md.append("| " + " | ".join([model_label(model, result), source_label(result)] + cells
                                    + [busy_text, memory_text, over_text] + ratios) + " |")
        text.append(f"{model:24} {source_label(result):5} " + " ".join(f"{c:>10}" for c in cells)
                    + f" {busy_text:>8} {over_text:>8} " + " ".join(f"{r:>6}" for r in ratios))
    summary = []
    for _, _, title, target in RATIOS:
        values = [v for v in ratio_values[title] if v]
        g = geomean(values)
        if g:
            summary.append(f"{title}: geomean {g:.3f} over {len(values)} models, max "
                           f"{max(values):.3f}" + (f" (target, {target})" if target else ""))
        else:
            summary.append(f"{title}: no model has both figures")
    busy_ratios = [wall_over_busy(r)[0] for r in results.values()]
    busy_ratios = [b for b in busy_ratios if b]
    if busy_ratios:
        within = sum(1 for b in busy_ratios if b <= 1.05)
        summary.append(f"ours cudagraphs wall/busy: within 5% on {within} of {len(busy_ratios)} "
                       f"models (max {max(busy_ratios):.3f}; issue 28's target: all)")
    for model in missing:
        summary.append(f"{model}: not timed yet (no {os.path.join('timing', model + '.json')}: "
                       "the run stopped before it; rerun the same command to continue)")

    spread_header = ["model"] + [TITLES[v] for v in VARIANTS]
    spread_md = ["| " + " | ".join(spread_header) + " |", "|" + "---|" * len(spread_header)]
    for model, result in results.items():
        row = []
        for v in VARIANTS:
            values = (result["variants"].get(v) or {}).get("per_iter_ms") or []
            s = spread_percent(values)
            row.append(f"{s:.1f}% (n={len(values)})" if s is not None else "-")
        spread_md.append("| " + " | ".join([model] + row) + " |")

    verify_header = ["model", "source", "verify eager / cudagraphs / inductor / openxla",
                     "ours inductor cold compile s", "ours openxla cold compile s",
                     "Python cold compile s (default / r-o)",
                     "Python compile in the timing process s (default / r-o)",
                     "timing-process cache hits (default; r-o)"]
    verify_md = ["| " + " | ".join(verify_header) + " |", "|" + "---|" * len(verify_header)]
    verify_text = []
    for model, result in results.items():
        codes = " / ".join(str((result.get("verification") or {}).get(v) or "-") for v in OURS)
        seconds = compile_seconds(result)
        verify_md.append("| " + " | ".join([model, result.get("detail") or source_label(result),
                                            codes, *seconds]) + " |")
        verify_text.append(f"{model:24} verify {codes}; compile s: inductor {seconds[0]}, "
                           f"openxla {seconds[1]}, Python cold {seconds[2]}, Python in timing "
                           f"process {seconds[3]} ({seconds[4]})")

    memory_md, memory_summary = memory_table(results)
    summary += memory_summary
    notes = []
    for model, result in results.items():
        for line in notes_of(model, result):
            notes.append(f"- {model}: {line}")

    print("\n".join(text), file=stream)
    print("\n" + "\n".join(summary), file=stream)
    print("\nverification and compile seconds:\n" + "\n".join(verify_text), file=stream)
    if notes:
        print("\nnotes:\n" + "\n".join(notes), file=stream)

    lines = []
    if meta:
        lines += [meta, ""]
    lines += ["Per-iteration medians (ms) over the counted repeats of all rounds; busy = CUPTI "
              "GPU-busy per iteration of our cudagraphs step (last round); ratios of medians; "
              "source: pip = the torchvision/timm/transformers original, graph = our traced train "
              "forward converted to an ExportedProgram (no pip original).", ""]
    lines += md + [""] + [f"- {s}" for s in summary]
    lines += ["", "Peak device memory (MB): ours, the memory pass's allocated peak in the last "
              "round (CUDA graph steps: the larger of the steps' and the capture's); Python, "
              "the allocated peak of its warm-up calls after the compile (reduce-overhead's "
              "recording included), less what the process held before the variant was built.",
              ""]
    lines += memory_md
    lines += ["", "Spread of each variant: (max - min) / median over its counted repeats.", ""]
    lines += spread_md
    lines += ["", "Verification (our backends, from the warm-up phase's `--verify`; "
              "VERIFIER_SKIPPED where the bench ran with `--no-verify`) and compile "
              "seconds. Cold compiles ran in the warm-up phase, several at once on one busy "
              "host: upper bounds of an idle cold compile. Python's compile in the timing "
              "process ran with the warm-up's Inductor/Triton caches (hits: FX-graph and "
              "AOTAutograd cache hits / lookups).", ""]
    lines += verify_md
    if notes:
        lines += ["", "SKIPs, errors and notes:", ""] + notes
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--models", default="",
                        help="comma-separated models, in table order (default: every timed one)")
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    if not models:
        directory = os.path.join(args.out_dir, "timing")
        models = sorted(f[:-len(".json")] for f in os.listdir(directory) if f.endswith(".json"))
    meta = None
    meta_path = os.path.join(args.out_dir, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f).get("line")
    render(args.out_dir, models, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
