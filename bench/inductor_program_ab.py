"""The table of bench/inductor_program_ab_gpu.sh: what the inductor backend compiles of an imported
model, its torch.export package (exported) or its TorchScript program converted by TS2EPConverter
(traced), from the records that script copies into OUT_DIR:
  records-exported.jsonl, records-traced.jsonl  the cold-start sweeps: compile time (the
      compile-ahead's, seconds, with its export_s: loading the package, or the TorchScript
      conversion) and the verifier's code;
  records-round<N>-<program>.jsonl               the interleaved timing rounds: per_iter_time
      median of the counted repeats (repeat 0 is warm-up), ms, and per round exported/traced;
  records-pt2.jsonl                              the user .pt2's records.
Usage: python3 bench/inductor_program_ab.py OUT_DIR (markdown on stdout)."""
import glob
import json
import os
import re
import statistics
import sys


def records(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def key(record):
    return record["model"]["model_name"]


def median_ms(record):
    times = record["metrics"].get("per_iter_time") or []
    counted = times[1:] or times
    return statistics.median(counted) * 1e3 if counted else None


def compile_figures(record):
    """(compile seconds, export_s) of a record's package build, ahead of the sweep or in it."""
    compile_ = record.get("compile") or {}
    ahead = compile_.get("ahead") or {}
    seconds = ahead.get("compile_time_s")
    breakdown = ahead.get("breakdown_s") or compile_.get("breakdown_s") or {}
    if seconds is None:
        values = record["metrics"].get("compile_time_s") or [None]
        seconds = values[0]
    return seconds, breakdown.get("export_s")


def error_line(error):
    """The line of a record's error that says what failed (the child's "error:" line)."""
    lines = error.splitlines()
    return next((line for line in lines if "error:" in line), lines[0] if lines else "")[:160]


def cell(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def main(out):
    print("### Cold compiles (--cold-start) and --verify\n")
    print("| model | program | compile s | of it export_s | compile.program | verification |")
    print("|---|---|---|---|---|---|")
    for program in ("exported", "traced"):
        for r in sorted(records(os.path.join(out, f"records-{program}.jsonl")), key=key):
            seconds, export_s = compile_figures(r)
            error = r["metrics"].get("error")
            code = "ERROR: " + error_line(error) if error else r.get("verification_code", "-")
            print(f"| {key(r)} | {program} | {cell(seconds)} | {cell(export_s, 2)} | "
                  f"{(r.get('compile') or {}).get('program', '-')} | {code} |")

    rounds = sorted({int(m.group(1)) for path in glob.glob(os.path.join(out, "records-round*"))
                     if (m := re.search(r"records-round(\d+)-", path))})
    if rounds:
        print("\n### Step time, interleaved rounds (median ms of the counted repeats)\n")
        header = " | ".join(f"round {n} exported | round {n} traced | ratio" for n in rounds)
        print(f"| model | {header} |")
        print("|---|" + "---|" * (3 * len(rounds)))
        table = {}
        for n in rounds:
            for program in ("exported", "traced"):
                for r in records(os.path.join(out, f"records-round{n}-{program}.jsonl")):
                    table.setdefault(key(r), {})[(n, program)] = median_ms(r)
        for model in sorted(table):
            cells = []
            for n in rounds:
                a, b = table[model].get((n, "exported")), table[model].get((n, "traced"))
                cells += [cell(a, 3), cell(b, 3), cell(a / b if a and b else None, 3)]
            print(f"| {model} | " + " | ".join(cells) + " |")

    pt2 = records(os.path.join(out, "records-pt2.jsonl"))
    if pt2:
        print("\n### A user's .pt2 (--suite-name=exported)\n")
        print("| model | backend | test | median ms | verification or error |")
        print("|---|---|---|---|---|")
        for r in pt2:
            error = r["metrics"].get("error")
            outcome = r.get("verification_code") if not error else error_line(error)
            print(f"| {key(r)} | {r['experiment']['dynamo'] or 'eager'} | "
                  f"{r['experiment']['test']} | {cell(median_ms(r), 3)} | {outcome} |")


if __name__ == "__main__":
    main(sys.argv[1])
