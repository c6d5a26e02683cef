"""The table of bench/builtin_vs_checkout.sh: per model and test, the built-in C++ port beside the
TorchBench checkout's original (batch size, parameter and buffer bytes, median per-iteration time
over every round's counted repeats, built-in / checkout, verification codes).

Usage: python3 bench/builtin_vs_checkout_table.py OUT_DIR   (reads OUT_DIR/round-*/{builtin,checkout}/results.jsonl)
"""
import glob
import json
import os
import statistics
import sys

SIDES = ("builtin", "checkout")


def read_rounds(out):
    """{(model, test): {side: [record, ...]}} over every round's results."""
    table = {}
    for side in SIDES:
        for path in sorted(glob.glob(os.path.join(out, "round-*", side, "results.jsonl"))):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if not line.strip():
                        continue
                    record = json.loads(line)
                    key = (record["model"]["model_name"], record["experiment"]["test"])
                    table.setdefault(key, {}).setdefault(side, []).append(record)
    return table


def counted_times_ms(records):
    """Every record's per-iteration times without repeat 0 (the warm-up), in ms."""
    times = []
    for record in records:
        times += [t * 1e3 for t in record["metrics"].get("per_iter_time", [])[1:]]
    return times


def describe(records):
    """(batch, parameter MB, buffer MB, median ms or the error, codes) of one side's records."""
    if not records:
        return "-", "-", "-", "NOT_RUN", "-"
    last = records[-1]
    memory = last.get("memory", {})
    megabytes = lambda key: f"{memory[key] / 1e6:.2f}" if key in memory else "-"
    times = counted_times_ms(records)
    if times:
        timing = f"{statistics.median(times):.3f}"
    else:
        timing = last["metrics"].get("error", "no timings").splitlines()[0][:80]
    codes = ",".join(sorted({r.get("verification_code", "-") for r in records}))
    return (str(last["experiment"].get("batch_size", "-")), megabytes("parameters_bytes"),
            megabytes("buffers_bytes"), timing, codes)


def main():
    out = sys.argv[1]
    rows = read_rounds(out)
    print("| model | test | batch (ours / original) | parameters MB (ours / original) | "
          "buffers MB | median ms (ours / original) | ours / original | verify (ours / original) |")
    print("|---|---|---|---|---|---|---|---|")
    same_parameters = compared = 0
    for (model, test), sides in sorted(rows.items()):
        ours, original = describe(sides.get("builtin", [])), describe(sides.get("checkout", []))
        try:
            ratio = f"{float(ours[3]) / float(original[3]):.2f}"
        except ValueError:
            ratio = "-"
        if ours[1] != "-" and original[1] != "-":
            compared += 1
            same_parameters += ours[1] == original[1]
        print(f"| {model} | {test} | {ours[0]} / {original[0]} | {ours[1]} / {original[1]} | "
              f"{ours[2]} / {original[2]} | {ours[3]} / {original[3]} | {ratio} | "
              f"{ours[4]} / {original[4]} |")
    print(f"\n- parameter bytes equal (to 10 kB) in {same_parameters} of {compared} model/test rows "
          "that have both")


if __name__ == "__main__":
    main()
