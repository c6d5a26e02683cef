"""Seeds one column folder of bench/torchbench_checkout_gpu.sh with the records of an earlier run
(SEED_DIR), so that its sweep resumes them: the earlier records of exactly the configs this sweep
plans (its --dry-run's "Run with" lines on stdin: model, backend and test), less the models
SEED_EXCLUDE names (a regex: models whose records are stale, e.g. fixed since), and only those
whose accelerator_model is SEED_GPU when set (the runner resumes only records of the GPU model it
runs on: the others would sit in the file beside the new ones).
Usage: runner ... --dry-run | python3 bench/torchbench_checkout_seed.py SEED_DIR RESULTS_JSONL"""
import glob
import json
import os
import re
import sys

RUN_WITH = re.compile(r"--model-config=(\{.*?\}) --experiment-config=(\{.*\})")


def planned(lines):
    """(model, dynamo, test) of every config the dry run lists."""
    configs = set()
    for line in lines:
        found = RUN_WITH.search(line)
        if found:
            model, experiment = (json.loads(part) for part in found.groups())
            configs.add((model["model_name"], experiment["dynamo"], experiment["test"]))
    return configs


def main(seed_dir, results):
    configs = planned(sys.stdin)
    exclude = re.compile(os.environ.get("SEED_EXCLUDE") or "^$")
    gpu = os.environ.get("SEED_GPU")
    seeded = 0
    with open(results, "a", encoding="utf-8") as out:
        for path in sorted(glob.glob(os.path.join(seed_dir, "*", "results.jsonl"))):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if not line.strip():
                        continue
                    record = json.loads(line)
                    model = record["model"]["model_name"]
                    key = (model, record["experiment"]["dynamo"], record["experiment"]["test"])
                    same_gpu = not gpu or record["experiment"].get("accelerator_model") == gpu
                    if key in configs and same_gpu and not exclude.search(model):
                        out.write(line if line.endswith("\n") else line + "\n")
                        seeded += 1
    print(f"{results}: {seeded} records seeded from {seed_dir}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
