#!/usr/bin/env python3
"""Parent overhead per config: wall time from spawning a child to its record being written, for the
dummy suite, and how much of it the parent itself adds over running the same child by hand.

    bench/parent_overhead.py [--runner build/experiment_runner] [--accelerator cpu] [--runs 10]
                             [--child-start fork|exec|both]

Each run is a sweep of 2 configs (dummy eval and train, --repeat=1) into a fresh results file.
--child-start sets BENCHMATRIX_CHILD_START for the sweeps (default: the runner's own default);
`both` runs a sweep of each in every run, alternating which goes first, and reports each.
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
    parser.add_argument("--child-start", choices=["fork", "exec", "both"])
    args = parser.parse_args()
    starts = {"both": ["fork", "exec"], None: ["default"]}.get(args.child_start, [args.child_start])
    common = ["--suite-name=dummy", f"--accelerator={args.accelerator}", "--xla=None", "--dynamo=None",
              "--repeat=1"]
    sweep_per_config = {start: [] for start in starts}
    child_alone, startup = [], []
    with tempfile.TemporaryDirectory() as out:
        for run in range(args.runs):
            start = time.perf_counter()  # the parent's own start-up (loading LibTorch), once per sweep
            subprocess.run([args.runner, *common, "--test=eval", "--test=train", "--dry-run",
                            f"--output-dirname={out}"], check=True, capture_output=True)
            startup.append(time.perf_counter() - start)
            for child_start in starts if run % 2 == 0 else starts[::-1]:
                env = dict(os.environ)
                if child_start != "default":
                    env["BENCHMATRIX_CHILD_START"] = child_start
                start = time.perf_counter()
                subprocess.run([args.runner, *common, "--test=eval", "--test=train", "--no-resume",
                                f"--output-dirname={out}"], check=True, capture_output=True, env=env)
                sweep_per_config[child_start].append((time.perf_counter() - start) / 2)
            for test in ["eval", "train"]:
                config = ('{"accelerator": "%s", "xla": null, "xla_flags": null, "dynamo": null, '
                          '"torch_xla2": null, "test": "%s", "keep_model_data_on_cuda": false, '
                          '"enable_functionalization": false}' % (args.accelerator, test))
                start = time.perf_counter()
                subprocess.run([args.runner, *common, f"--output-dirname={out}",
                                f"--experiment-config={config}", '--model-config={"model_name": "dummy"}'],
                               check=True, capture_output=True)
                child_alone.append(time.perf_counter() - start)

    def spread(values):
        return (f"min {min(values) * 1e3:.0f} ms, median {statistics.median(values) * 1e3:.0f} ms, "
                f"max {max(values) * 1e3:.0f} ms")

    print(f"accelerator {args.accelerator}, {args.runs} sweeps of 2 configs")
    print(f"the same child run by hand:                        {spread(child_alone)}")
    print(f"parent start-up, once per sweep (--dry-run):      {spread(startup)}")
    for child_start, values in sweep_per_config.items():
        parent_share = (statistics.median(values) - statistics.median(startup) / 2
                        - statistics.median(child_alone))
        print(f"children {child_start}: spawn-to-record per config (sweep wall / configs): "
              f"{spread(values)}; the parent's own work per config (sweep - start-up/2 - child, "
              f"medians): {parent_share * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
