"""--paired-baseline: one child times the baseline backend and the config's own alternately, repeat by
repeat, on the same inputs, and its record carries both sides' repeats and the per-pair speedups with
their median and bootstrap interval (issue 24). torchscript against eager on the CPU: cheap, and the
same code path as cudagraphs against eager on a GPU.
"""
import statistics
import unittest

import test_analyzer_shape as shape  # a module, so that its tests are not collected here
from harness import RUNNER, SHARED_CACHE, OutputDirTest, read_records, run

REPEAT = 4


class PairedTest(OutputDirTest):
    def test_torchscript_paired_with_eager_eager_unpaired(self):
        run(RUNNER, "--suite-name=torchbench", "--filter=^squeezenet1_1$", "--accelerator=cpu",
            "--xla=None", "--dynamo=None", "--dynamo=torchscript", "--test=eval", "--test=train",
            "--batch-size=1", f"--repeat={REPEAT}", "--paired-baseline=eager", "--verify",
            f"--cache-dir={SHARED_CACHE}", f"--output-dirname={self.out}", timeout=900)
        records = read_records(self.results)
        by_config = {(r["experiment"]["dynamo"], r["experiment"]["test"]): r for r in records}
        self.assertEqual(set(by_config), {(None, "eval"), (None, "train"), ("torchscript", "eval"),
                                          ("torchscript", "train")})
        for record in records:
            with self.subTest(dynamo=record["experiment"]["dynamo"], test=record["experiment"]["test"]):
                shape.AnalyzerShapeTest.assert_analyzer_reads(self, record)
                self.assertNotIn("error", record["metrics"])
        for test in ("eval", "train"):
            with self.subTest(test=test):
                # eager is the baseline itself: unpaired, as without the flag
                eager = by_config[(None, test)]
                self.assertNotIn("paired", eager)
                self.assertNotIn("baseline_per_iter_time", eager["metrics"])
                self.assertNotIn("baseline_total_time", eager["metrics"])
                paired_record = by_config[("torchscript", test)]
                metrics = paired_record["metrics"]
                baseline = metrics["baseline_per_iter_time"]
                experiment = metrics["per_iter_time"]
                self.assertEqual(len(baseline), REPEAT)
                self.assertEqual(len(metrics["baseline_total_time"]), REPEAT)
                self.assertTrue(all(t > 0 for t in baseline + experiment))
                paired = paired_record["paired"]
                self.assertEqual(paired["baseline"], "eager")
                self.assertEqual(paired["order"], "ABBA")
                # repeat 0 is the warm-up pair; every later pair counts
                expected = [b / e for b, e in zip(baseline[1:], experiment[1:])]
                self.assertEqual(len(paired["speedups"]), REPEAT - 1)
                for got, want in zip(paired["speedups"], expected):
                    self.assertAlmostEqual(got, want, delta=1e-12 * want)
                speedup = paired["speedup"]
                self.assertEqual(speedup["count"], REPEAT - 1)
                self.assertEqual(speedup["confidence"], 0.95)
                self.assertAlmostEqual(speedup["median"], statistics.median(paired["speedups"]))
                self.assertLessEqual(speedup["low"], speedup["median"])
                self.assertLessEqual(speedup["median"], speedup["high"])
                self.assertEqual(list(paired_record)[7], "paired")  # first after verification_code
                # the verifier child verifies the config's own backend, as without the flag
                self.assertEqual(paired_record["verification_code"], "PASS",
                                 paired_record.get("verification"))

    def test_bad_baseline_is_refused_naming_the_choices(self):
        proc = run(RUNNER, "--suite-name=torchbench", "--filter=^squeezenet1_1$", "--accelerator=cpu",
                   "--paired-baseline=nope", "--dry-run", f"--output-dirname={self.out}", check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--paired-baseline", proc.stderr)
        self.assertIn("invalid choice: 'nope'", proc.stderr)
        for choice in ("eager", "torchscript", "cudagraphs", "inductor"):
            self.assertIn(f"'{choice}'", proc.stderr)
        self.assertNotIn("'openxla'", proc.stderr.split("invalid choice")[1])
        help_text = run(RUNNER, "--help").stdout
        self.assertIn("--paired-baseline", help_text)
        self.assertIn("run unpaired", help_text)


if __name__ == "__main__":
    unittest.main()
