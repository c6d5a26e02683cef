"""--metrics accuracy [--baseline B] [--rtol R] [--atol A]: each config's eval outputs compared with the
baseline backend's on the same inputs (torch.testing.assert_close semantics), recorded in metrics."""
import os
import unittest
from unittest import mock

import torch

from harness import FAULTY_RUNNER, RUNNER, SHARED_CACHE, OutputDirTest, read_records, run

DUMMY = ["--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--test=eval", "--repeat=2",
         f"--cache-dir={SHARED_CACHE}"]
FAULTY = ["--suite-name=verifier_checks", "--filter=^two_outputs$", "--accelerator=cpu", "--xla=None",
          "--dynamo=None", "--test=eval", "--repeat=2"]

# (actual, expected, rtol, atol, close?) as torch.testing.assert_close decides; the same table is in
# tests/verifier/assert_close_test.cpp for the C++ comparison.
CRAFTED = [
    ([1.0, 2.0], [1.0, 2.0 + 1.5e-5], None, None, False),  # float32 defaults: 1e-5 + 1.3e-6 * 2
    ([1.0, 2.0], [1.0, 2.0 + 1.5e-5], 1e-5, 0.0, True),
    ([1.0, 2.0], [1.0, 2.0 + 1.5e-5], 0.0, 1e-3, True),
    ([float("nan")], [float("nan")], None, None, False),   # equal_nan=False
    ([float("inf")], [float("inf")], None, None, True),
]


def accuracy_of(record):
    """The accuracy check's figures in one dict: each metrics.accuracy* list's repeat-0 value (the
    check runs once, after the repeats) and the top-level "accuracy" object's keys as
    accuracy_<key> (baseline, note, error, mismatch); the other metrics as they are."""
    m = {k: v[0] if k.startswith("accuracy") else v for k, v in record["metrics"].items()}
    m.update({"accuracy_" + k: v for k, v in record.get("accuracy", {}).items()})
    return m


class AccuracyTest(OutputDirTest):
    def sweep(self, *args, binary=RUNNER, common=DUMMY, backend=None):
        env = dict(os.environ)
        env.pop("BENCHMATRIX_TEST_BACKEND", None)
        if backend:
            env["BENCHMATRIX_TEST_BACKEND"] = backend
        run(binary, *common, *args, f"--output-dirname={self.out}", "--no-resume", env=env)
        records = read_records(self.results)
        self.assertTrue(records)
        return records

    def assert_consistent(self, m):
        for key in ("accuracy", "accuracy_max_abs_error", "accuracy_max_rel_error", "accuracy_baseline"):
            self.assertIn(key, m)
        self.assertIn(m["accuracy"], (0, 1))
        self.assertGreaterEqual(m["accuracy_max_abs_error"], 0)
        self.assertGreaterEqual(m["accuracy_max_rel_error"], 0)
        self.assertEqual("accuracy_mismatch" in m, m["accuracy"] == 0)
        self.assertEqual(len(m["total_time"]), 2)  # the timed repeats are still there

    def test_torchscript_against_eager_passes_with_small_errors(self):
        for r in self.sweep("--dynamo=torchscript", "--metrics", "accuracy"):
            m = accuracy_of(r)
            self.assert_consistent(m)
            self.assertEqual(m["accuracy"], 1, m)
            self.assertEqual(m["accuracy_baseline"], "eager")
            self.assertLess(m["accuracy_max_abs_error"], 1e-2)  # eval runs in bfloat16

    def test_eager_against_eager_compares_two_runs(self):
        for r in self.sweep("--dynamo=None", "--metrics=accuracy", "--baseline=None"):
            m = accuracy_of(r)
            self.assert_consistent(m)
            self.assertEqual(m["accuracy"], 1, m)
            self.assertEqual(m["accuracy_max_abs_error"], 0)
            self.assertIn("two runs", m["accuracy_note"])

    def test_zero_tolerances_agree_with_the_recorded_error(self):
        for r in self.sweep("--dynamo=torchscript", "--metrics=accuracy", "--rtol=0", "--atol=0"):
            m = accuracy_of(r)
            self.assert_consistent(m)
            self.assertEqual(m["accuracy"] == 1, m["accuracy_max_abs_error"] == 0, m)

    def test_train_is_not_compared_and_says_so(self):
        records = self.sweep("--dynamo=None", "--metrics=accuracy", common=DUMMY[:3] + ["--test=train", "--repeat=2"])
        for r in records:
            self.assertNotIn("accuracy", accuracy_of(r))
            self.assertIn("train", accuracy_of(r)["accuracy_note"])

    def test_unavailable_baseline_is_an_error_not_a_pass(self):
        for r in self.sweep("--dynamo=None", "--metrics=accuracy", "--baseline=cudagraphs"):
            self.assertNotIn("accuracy", accuracy_of(r))
            self.assertIn("accuracy_error", accuracy_of(r))

    def test_eager_is_a_synonym_of_none(self):
        for r in self.sweep("--dynamo=None", "--metrics=accuracy", "--baseline=eager"):
            m = accuracy_of(r)
            self.assert_consistent(m)
            self.assertEqual(m["accuracy_baseline"], "eager")
            self.assertEqual(m["accuracy"], 1, m)
            self.assertIn("two runs", m["accuracy_note"])  # eager against the eager baseline
        proc = run(RUNNER, "--help")
        self.assertIn("eager, the same as None", " ".join(proc.stdout.split()))

    def test_openxla_baseline_runs_with_pjrt(self):
        # Without a PJRT plugin for the CPU the baseline cannot run: the reason is PJRT's, not "no
        # backend for xla=None" (the baseline used to lose its xla=PJRT).
        env = {k: v for k, v in os.environ.items()
               if k not in ("BENCHMATRIX_PJRT_PLUGIN", "BENCHMATRIX_XLA_EXPORT_ONLY")}
        with mock.patch.dict(os.environ, env, clear=True):
            records = self.sweep("--dynamo=None", "--metrics=accuracy", "--baseline=openxla")
        for r in records:
            m = accuracy_of(r)
            self.assertNotIn("accuracy", m)
            self.assertEqual(m["accuracy_baseline"], "openxla+dynamo")
            self.assertIn("xla=PJRT is not available on accelerator=cpu", m["accuracy_error"])

    def test_openxla_baseline_reaches_the_xla_backend(self):
        try:
            import torchax  # noqa: F401  (the StableHLO export's helper needs it)
        except ImportError:
            self.skipTest("no torchax: the openxla export cannot run here")
        # BENCHMATRIX_XLA_EXPORT_ONLY: the openxla backend exports the dummy model's StableHLO and
        # stops; that it got there shows the baseline was built as xla=PJRT dynamo=openxla.
        env = dict(os.environ, BENCHMATRIX_XLA_EXPORT_ONLY="1")
        env.pop("BENCHMATRIX_TEST_BACKEND", None)
        run(RUNNER, *DUMMY, "--dynamo=None", "--metrics=accuracy", "--baseline=openxla",
            f"--output-dirname={self.out}", "--no-resume", env=env, timeout=900)
        for r in read_records(self.results):
            m = accuracy_of(r)
            self.assertNotIn("accuracy", m)
            self.assertIn("StableHLO exported to", m["accuracy_error"])

    def test_planted_mismatch_fails_and_rtol_alone_makes_it_pass(self):
        [r] = self.sweep("--metrics=accuracy", binary=FAULTY_RUNNER, common=FAULTY, backend="perturb:0.5")
        m = accuracy_of(r)
        self.assert_consistent(m)
        self.assertEqual(m["accuracy"], 0)
        self.assertAlmostEqual(m["accuracy_max_abs_error"], 0.5, delta=0.01)  # bfloat16 eval
        self.assertIn("output[1]", m["accuracy_mismatch"])
        self.assertIn("flat index", m["accuracy_mismatch"])
        # relu(b(x)) + 0.5 against relu(b(x)): where relu gives 0 only atol can cover it. --atol alone
        # passes (rtol keeps its bfloat16 default); --rtol alone replaces only rtol (atol stays 1e-05).
        [r] = self.sweep("--metrics=accuracy", "--atol=0.6", binary=FAULTY_RUNNER, common=FAULTY,
                         backend="perturb:0.5")
        self.assertEqual(accuracy_of(r)["accuracy"], 1, accuracy_of(r))
        [r] = self.sweep("--metrics=accuracy", "--rtol=0.25", binary=FAULTY_RUNNER, common=FAULTY,
                         backend="perturb:0.5")
        self.assertEqual(accuracy_of(r)["accuracy"], 0, accuracy_of(r))
        self.assertIn("rtol 0.25, atol 1e-05", accuracy_of(r)["accuracy_mismatch"])
        [r] = self.sweep("--metrics=accuracy", "--atol=0.6", "--rtol=0", binary=FAULTY_RUNNER,
                         common=FAULTY, backend="perturb:0.5")
        self.assertEqual(accuracy_of(r)["accuracy"], 1, accuracy_of(r))

    def test_usage_errors_exit_2(self):
        for args in (["--baseline=None"], ["--rtol=1e-3"], ["--atol=1e-3"],
                     ["--metrics=accuracy", "--rtol=-1"], ["--metrics=accuracy", "--atol=-0.5"],
                     ["--metrics=speedup"], ["--metrics=accuracy", "--baseline=nope"]):
            with self.subTest(args=args):
                proc = run(RUNNER, *DUMMY, "--dry-run", *args, check=False)
                self.assertEqual(proc.returncode, 2, proc.stderr)

    def test_existing_flag_prefixes_still_work(self):
        # argparse prefixes: --ac (accelerator), --bat (batch-size), --rep (repeat), --metr (metrics)
        proc = run(RUNNER, "--suite-name=dummy", "--ac=cpu", "--bat=2", "--rep=1", "--metr=accuracy",
                   "--dry-run", f"--output-dirname={self.out}")
        self.assertEqual(proc.returncode, 0)

    def test_crafted_cases_match_torch_testing(self):
        for actual, expected, rtol, atol, close in CRAFTED:
            kwargs = {} if rtol is None else {"rtol": rtol, "atol": atol}
            try:
                torch.testing.assert_close(torch.tensor(actual), torch.tensor(expected), **kwargs)
                self.assertTrue(close)
            except AssertionError as e:
                self.assertFalse(close, e)


if __name__ == "__main__":
    unittest.main()
