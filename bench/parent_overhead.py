#!/usr/bin/env python3
"""Parent overhead per config: wall time from spawning a child to its record being written, for the
dummy suite, and how much of it the parent itself adds over running the same child by hand.

    bench/parent_overhead.py [--runner build/experiment_runner] [--accelerator cpu] [--runs 10]

Each run is a sweep of 2 configs (dummy eval and train, --repeat=1) into a fresh results file.
Prints min/median/max; BENCHMARKS.md records the figures per machine.
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runner", default="build/experiment_runner")
    parser.add_argument("--accelerator", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    common = ["--suite-name=dummy", f"--accelerator={args.accelerator}", "--xla=None", "--dynamo=None",
              "--repeat=1"]
    sweep_per_config, child_alone, startup = [], [], []
    with tempfile.TemporaryDirectory() as out:
        for _ in range(args.runs):
            start = time.perf_counter()  # the parent's own start-up (loading LibTorch), once per sweep
            subprocess.run([args.runner, *common, "--test=eval", "--test=train", "--dry-run",
                            f"--output-dirname={out}"], check=True, capture_output=True)
            startup.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run([args.runner, *common, "--test=eval", "--test=train", "--no-resume",
                            f"--output-dirname={out}"], check=True, capture_output=True)
            sweep_per_config.append((time.perf_counter() - start) / 2)
            for test in ["eval", "train"]:
                config = ('{"accelerator": "%s", "xla": null, "xla_flags": null, "dynamo": null, '
                          '"torch_xla2": null, "test": "%s", "keep_model_data_on_cuda": false, '
                          '"enable_functionalization": false}' % (args.accelerator, test))
                start = time.perf_counter()
                subprocess.run([args.runner, *common, f"--output-dirname={out}",
                                f"--experiment-config={config}", '--model-config={"model_name": "dummy"}'],
                               check=True, capture_output=True)
                child_alone.append(time.perf_counter() - start)
    parent_share = (statistics.median(sweep_per_config) - statistics.median(startup) / 2
                    - statistics.median(child_alone))

    def spread(values):
        return (f"min {min(values) * 1e3:.0f} ms, median {statistics.median(values) * 1e3:.0f} ms, "
                f"max {max(values) * 1e3:.0f} ms")

    print(f"accelerator {args.accelerator}, {args.runs} sweeps of 2 configs")
    print(f"spawn-to-record per config (sweep wall / configs): {spread(sweep_per_config)}")
    print(f"the same child run by hand:                        {spread(child_alone)}")
    print(f"parent start-up, once per sweep (--dry-run):      {spread(startup)}")
    print(f"parent's own work per config (sweep - start-up/2 - child, medians): "
          f"{parent_share * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
