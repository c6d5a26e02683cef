#!/usr/bin/env python3
"""Merges the column folders of a bench/torchbench_checkout_gpu.sh call (NAME or NAME_pK with
PARTS) into the committed records (bench/results/torchbench_checkout/NAME/results.jsonl): a new
record replaces the old one of the same model, backend and test; an ERROR or SKIP never replaces
a timed record (a coverage call's out-of-memory beside other columns is not news about the model).
Usage: bench/torchbench_checkout_merge.py CALL_DIR [RESULTS_DIR (bench/results/torchbench_checkout)]"""
import glob
import json
import os
import re
import sys


def key(record):
    return (record["model"]["model_name"], record["experiment"]["dynamo"],
            record["experiment"]["test"])


def timed(record):
    return "error" not in record.get("metrics", {})


def read(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(call_dir, results_dir):
    columns = {}
    for path in sorted(glob.glob(os.path.join(call_dir, "*", "results.jsonl"))):
        column = re.sub(r"_p\d+$", "", os.path.basename(os.path.dirname(path)))
        columns.setdefault(column, []).extend(read(path))
    for column, new in columns.items():
        target = os.path.join(results_dir, column, "results.jsonl")
        merged = {key(r): r for r in (read(target) if os.path.exists(target) else [])}
        replaced = added = kept = 0
        for record in new:
            old = merged.get(key(record))
            if old is not None and timed(old) and not timed(record):
                kept += 1
                continue
            replaced += old is not None
            added += old is None
            merged[key(record)] = record
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target + ".tmp", "w") as f:
            for record in sorted(merged.values(), key=lambda r: key(r)[0]):
                f.write(json.dumps(record) + "\n")
        os.replace(target + ".tmp", target)
        print(f"{column}: {len(merged)} records ({added} new, {replaced} replaced, {kept} timed "
              f"kept over a new ERROR or SKIP)")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "bench/results/torchbench_checkout")
