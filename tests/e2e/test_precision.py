"""The precision and Inductor-mode axes (issue 52) on the CPU: --precision expands the matrix for
every backend, each record names the precision it ran in (and only then: a default config's record
is the original's), --verify judges each precision with its own tolerance, resume tells the
precisions apart, the reports keep them in separate rows, and --inductor-mode is an axis of the
inductor configs alone."""
import csv
import json
import os
import unittest

from harness import RUNNER, SHARED_CACHE, OutputDirTest, read_records, run

COMPARE_RUNS = os.environ.get("COMPARE_RUNS", "../../build/compare_runs")
AGGREGATE = os.environ.get("AGGREGATE", "../../build/aggregate")
RESULT_ANALYZER = os.environ.get("RESULT_ANALYZER", "../../build/result_analyzer")
PRECISIONS = ["float32", "bfloat16", "amp_bf16"]
# What the verifier's record says each precision computed in (suites/precision_rule.hpp)
COMPUTED_IN = {"float32": "float32", "bfloat16": "bfloat16", "amp_bf16": "bfloat16 autocast"}


def key(record):
    e = record["experiment"]
    return (record["model"]["model_name"], e["dynamo"], e["test"], e.get("precision"))


class PrecisionAxisTest(OutputDirTest):
    def sweep(self, *args, check=True, cache=SHARED_CACHE):
        return run(RUNNER, "--accelerator=cpu", "--xla=None", "--repeat=2",
                   f"--output-dirname={self.out}", f"--cache-dir={cache}", *args,
                   check=check, timeout=1500)

    def test_every_backend_runs_and_verifies_each_precision(self):
        precision_flags = [f"--precision={p}" for p in PRECISIONS]
        # the dummy model through the three CPU backends, eval (inductor compiles one package per
        # precision), and its train step in eager
        self.sweep("--suite-name=dummy", "--dynamo=None", "--dynamo=torchscript",
                   "--dynamo=inductor", "--test=eval", "--verify", *precision_flags)
        self.sweep("--suite-name=dummy", "--dynamo=None", "--test=train", "--verify",
                   *precision_flags)
        # two real models, eager and torchscript eval, and dcgan's eager train step (torchbench's
        # own rule trains in float32 on the CPU; each precision replaces it). Fewer configs than
        # the full product: each verified config costs seconds of CI on 2 cores (issue 48).
        self.sweep("--suite-name=torchbench", "--filter=^(dcgan|squeezenet1_1)$", "--batch-size=2",
                   "--dynamo=None", "--dynamo=torchscript", "--test=eval", "--verify",
                   *precision_flags)
        self.sweep("--suite-name=torchbench", "--filter=^dcgan$", "--batch-size=2",
                   "--dynamo=None", "--test=train", "--verify", *precision_flags)
        records = read_records(self.results)
        by_key = {key(r): r for r in records}
        self.assertEqual(len(by_key), len(records), "one record per config")
        expected = ({("dummy", d, "eval", p) for d in (None, "torchscript", "inductor")
                     for p in PRECISIONS}
                    | {("dummy", None, "train", p) for p in PRECISIONS}
                    | {(m, d, "eval", p) for m in ("dcgan", "squeezenet1_1")
                       for d in (None, "torchscript") for p in PRECISIONS}
                    | {("dcgan", None, "train", p) for p in PRECISIONS})
        self.assertEqual(set(by_key), expected)
        for k, record in by_key.items():
            with self.subTest(config=k):
                self.assertEqual(record["verification_code"], "PASS", record.get("verification"))
                details = record["verification"]
                self.assertEqual(details["precision"], COMPUTED_IN[k[3]])
                self.assertIn(COMPUTED_IN[k[3]], details["tolerance_rule"])
                # the precision closes the experiment object, after the original's ten keys
                self.assertEqual(list(record["experiment"])[-1], "precision")
                self.assertNotIn("inductor_mode", record["experiment"])
        # bfloat16 moves the outputs away from float64 more than float32 does (the verifier's
        # error against its float64 run), whatever the backend
        for model in ("dummy", "dcgan", "squeezenet1_1"):
            float32 = by_key[(model, None, "eval", "float32")]["verification"]["rmse_vs_fp64"]
            bfloat16 = by_key[(model, None, "eval", "bfloat16")]["verification"]["rmse_vs_fp64"]
            self.assertGreater(bfloat16, float32, model)

        # resume: the same sweep again runs nothing; the default precision is another config,
        # whose record has no "precision" key (the original's shape)
        count = len(records)
        self.sweep("--suite-name=dummy", "--dynamo=None", "--test=eval", *precision_flags)
        self.assertEqual(len(read_records(self.results)), count)
        self.sweep("--suite-name=dummy", "--dynamo=None", "--test=eval")
        records = read_records(self.results)
        self.assertEqual(len(records), count + 1)
        self.assertNotIn("precision", records[-1]["experiment"])
        self.assertEqual(len(records[-1]["experiment"]), 10)

        # compare_runs keeps the precisions in separate rows, labelled
        proc = run(COMPARE_RUNS, self.results, self.results, "--filter=^dummy$")
        for label in ("eager@float32", "eager@bfloat16", "eager@amp_bf16",
                      "inductor@bfloat16", "torchscript@amp_bf16"):
            self.assertIn(label, proc.stdout)
        # result_analyzer's CSV gains a precision column (the records at auto leave it empty)
        run(RESULT_ANALYZER, f"--output-dirname={self.out}")
        with open(os.path.join(self.out, "metric_report.csv"), encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), count + 1)
        self.assertEqual(sorted({r["precision"] for r in rows}), ["", *sorted(PRECISIONS)])
        # aggregate reports one precision at a time: its speedups compare like with like
        aggregate = [AGGREGATE, self.results, "--accelerator=cpu", "--backends", "eager",
                     "torchscript", "--report=latest_grouped", "--format=markdown",
                     "--skip-samples=0"]
        proc = run(*aggregate, "--precision=amp_bf16")
        self.assertRegex(proc.stdout, r"\| dcgan +\| +1\.00 ")  # the latest sweep's models
        proc = run(*aggregate, "--precision=float16", check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("--precision amp_bf16 --inductor-mode default", proc.stderr)

    def test_inductor_mode_is_an_axis_of_inductor_configs_only(self):
        proc = self.sweep("--suite-name=dummy", "--dynamo=None", "--dynamo=inductor",
                          "--test=eval", "--inductor-mode=default", "--inductor-mode=max-autotune",
                          "--dry-run")
        marker = "--experiment-config="
        configs = [json.loads(line.split(marker, 1)[1])
                   for line in (proc.stdout + proc.stderr).splitlines() if marker in line]
        modes = sorted((c["dynamo"] or "eager", c.get("inductor_mode", "default")) for c in configs)
        self.assertEqual(modes, [("eager", "default"), ("inductor", "default"),
                                 ("inductor", "max-autotune")], proc.stderr)
        # a real sweep: each mode its own package; max-autotune benchmarks kernel choices. Both
        # packages compile here, in a cache of this test's own, with Inductor's own caches (kept
        # under --cache-dir, compiler-caches/) empty: in the shared cache an earlier run's FX-graph
        # cache entry let a rebuilt max-autotune package skip lowering and its benchmarks
        # (autotune_s 0.0 after a change to the helper's sources, 2026-12-06).
        self.sweep("--suite-name=dummy", "--dynamo=inductor", "--test=eval", "--verify",
                   "--inductor-mode=default", "--inductor-mode=max-autotune",
                   cache=os.path.join(self.out, "cache"))
        records = {r["experiment"].get("inductor_mode", "default"): r
                   for r in read_records(self.results)}
        self.assertEqual(set(records), {"default", "max-autotune"})
        self.assertEqual(list(records["max-autotune"]["experiment"])[-1], "inductor_mode")
        compiles = {mode: r["compile"] for mode, r in records.items()}
        self.assertNotEqual(compiles["default"]["package"], compiles["max-autotune"]["package"])
        for mode, record in records.items():
            self.assertEqual(record["verification_code"], "PASS", (mode, record.get("verification")))
        self.assertIs(compiles["max-autotune"]["cache_hit"], False)
        self.assertGreater(compiles["max-autotune"]["breakdown_s"]["autotune_s"], 0)
        # a mode no config takes is a usage error, not a dead flag
        proc = self.sweep("--suite-name=dummy", "--dynamo=None", "--inductor-mode=max-autotune",
                          check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--inductor-mode: applies to --dynamo=inductor configs", proc.stderr)
        proc = self.sweep("--suite-name=dummy", "--precision=fp8", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("fp8", proc.stderr)


if __name__ == "__main__":
    unittest.main()
