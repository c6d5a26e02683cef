"""The table of bench/precision_modes.sh (issue 52): per model and precision, our eager, inductor and
inductor max-autotune steps beside Python's eager and torch.compile (default, reduce-overhead,
max-autotune) of the same graph.

Reads OUT_DIR/results.jsonl (experiment_runner's records) and, if present, OUT_DIR/anchor.jsonl
(bench/torch_compile_anchor.py). Each cell: median step time in ms over the counted repeats
(repeat 0 is the warm-up), then the compile time in s and the peak memory in MB (device peak
allocated on CUDA, host peak RSS on the CPU) where the record has them; ours cells end with the
verification code. "ours/Py" is our best compiled step over Python's best compiled step of the
same precision (below 1: ours is faster).

Usage: python bench/precision_modes_table.py OUT_DIR
"""
import json
import os
import statistics
import sys

OURS = ["eager", "inductor", "inductor(max-autotune)"]
PYTHON = ["eager", "compile", "compile_ro", "compile_ma"]
PYTHON_TITLES = {"eager": "Py eager", "compile": "Py compile", "compile_ro": "Py reduce-overhead",
                 "compile_ma": "Py max-autotune"}


def once(metrics, name):
    value = metrics.get(name)
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, (int, float)) else None


def ours_cell(record):
    metrics = record["metrics"]
    if "error" in metrics:
        reason = metrics["error"].splitlines()[0]
        return ("SKIP" if reason.startswith("SKIP") else "error") + f": {reason[:60]}", None
    per_iter = [t for t in metrics.get("per_iter_time", [])[1:] if isinstance(t, (int, float))]
    if not per_iter:
        return "no timings", None
    ms = statistics.median(per_iter) * 1e3
    peak = metrics.get("peak_device_allocated_bytes") or metrics.get("peak_host_rss_bytes")
    peak = statistics.median(peak[1:] or peak) if isinstance(peak, list) and peak else None
    parts = [f"{ms:.2f} ms"]
    compile_s = once(metrics, "compile_time_s")
    if compile_s is not None:
        parts.append(f"{compile_s:.0f} s")
    if peak:
        parts.append(f"{peak / 2**20:.0f} MB")
    parts.append(record.get("verification_code", ""))
    return " / ".join(parts), ms


def python_cell(line):
    if "error" in line:
        return f"error: {line['error'].splitlines()[0][:60]}", None
    parts = [f"{line['median_ms']:.2f} ms", f"{line['compile_s']:.0f} s"]
    if line.get("peak_allocated_bytes"):
        parts.append(f"{line['peak_allocated_bytes'] / 2**20:.0f} MB")
    return " / ".join(parts), line["median_ms"]


def main(out_dir):
    ours = {}  # (model, precision) -> backend label -> record
    with open(os.path.join(out_dir, "results.jsonl"), encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            e = r["experiment"]
            backend = e["dynamo"] or "eager"
            if e.get("inductor_mode", "default") != "default":
                backend += f"({e['inductor_mode']})"
            ours.setdefault((r["model"]["model_name"], e.get("precision", "auto")), {})[backend] = r
    python = {}  # (model, precision) -> mode -> anchor line
    anchor_path = os.path.join(out_dir, "anchor.jsonl")
    if os.path.exists(anchor_path):
        with open(anchor_path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    a = json.loads(line)
                    python.setdefault((a["model"], a.get("precision", "auto")), {})[a["mode"]] = a
    columns = OURS + ([PYTHON_TITLES[m] for m in PYTHON] if python else [])
    print("Each cell: median ms per step / compile s / peak MB (/ verification code)\n")
    print("| model | precision | " + " | ".join(columns) + (" | ours/Py |" if python else " |"))
    print("|---|---|" + "---|" * (len(columns) + (1 if python else 0)))
    for (model, precision), backends in sorted(ours.items()):
        cells, ours_best, python_best = [], None, None
        for backend in OURS:
            text, ms = ours_cell(backends[backend]) if backend in backends else ("—", None)
            cells.append(text)
            if backend != "eager" and ms is not None:
                ours_best = ms if ours_best is None else min(ours_best, ms)
        if python:
            lines = python.get((model, precision), {})
            for mode in PYTHON:
                text, ms = python_cell(lines[mode]) if mode in lines else ("—", None)
                cells.append(text)
                if mode != "eager" and ms is not None:
                    python_best = ms if python_best is None else min(python_best, ms)
            ratio = f"{ours_best / python_best:.2f}" if ours_best and python_best else "—"
            cells.append(ratio)
        print(f"| {model} | {precision} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
