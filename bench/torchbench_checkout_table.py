"""The TorchBench checkout coverage table (bench/torchbench_checkout_gpu.sh): one row per model of
the eager and inductor columns' records, each cell PASS (median ms per iteration), the verification
code, SKIP or ERROR with the first line of why; then how many run (every record but a SKIP, ERROR
records included) and PASS per column.
Usage: python3 bench/torchbench_checkout_table.py OUT_DIR"""
import json
import os
import statistics
import sys


def records(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def reason(error):
    """The line of a record's error that says why: the first, unless that only says the child
    failed ("child exited with status 1"), when the child's last line naming an error (a Python
    exception, "error:"; warnings at exit come after it) or else its last line says more."""
    lines = [line for line in error.splitlines() if line.strip()]
    if not lines[0].startswith("child ") or len(lines) == 1:
        return lines[0]
    named = [line for line in lines[1:] if "Error" in line or "error:" in line or "Exception" in line]
    return (named or lines)[-1]


def cell(record):
    error = record["metrics"].get("error")
    if error:
        first = reason(error)[:110].replace("|", "/")
        return ("SKIP" if error.startswith("SKIP") else "ERROR") + ": " + first.removeprefix("SKIP: ")
    per_iter = record["metrics"].get("per_iter_time") or []
    ms = f" {statistics.median(per_iter) * 1000:.2f} ms" if per_iter else ""
    return f"{record.get('verification_code', '?')}{ms}"


def main(out):
    """Every results.jsonl in OUT_DIR's folders, each record in the column of its backend and test
    (the script's folders: eager, eager_train, inductor; earlier runs kept eval and train in one)."""
    columns = {("eager", "eval"): {}, ("eager", "train"): {}, ("inductor", "eval"): {}}
    for folder in sorted(os.listdir(out)):
        for r in records(os.path.join(out, folder, "results.jsonl")):
            backend = r["experiment"].get("dynamo") or "eager"
            columns.setdefault((backend, r["experiment"]["test"]), {})[r["model"]["model_name"]] = r
    models = sorted({m for column in columns.values() for m in column})
    print("| model | " + " | ".join(f"{b} {t}" for b, t in columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for model in models:
        cells = [cell(c[model]) if model in c else "NOT_RUN" for c in columns.values()]
        print(f"| {model} | " + " | ".join(cells) + " |")
    print()
    for (name, test), column in columns.items():
        # issue 49 counts every model that is not a SKIP as one that ran: an ERROR record too
        ran = [r for r in column.values()
               if not r["metrics"].get("error", "").startswith("SKIP")]
        errors = [r for r in ran if "error" in r["metrics"]]
        passed = [r for r in ran if r.get("verification_code") == "PASS"
                  and "error" not in r["metrics"]]
        share = f"{100 * len(passed) / len(ran):.0f}%" if ran else "-"
        print(f"- {name} {test}: {len(column)} records, {len(ran)} ran (not SKIP; {len(errors)} of "
              f"them ERROR), {len(passed)} PASS ({share} of those that ran)")


if __name__ == "__main__":
    main(sys.argv[1])
