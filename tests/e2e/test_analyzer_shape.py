"""Records of every backend and flag combination read the way the original's analyzers read them.

PyTorch/XLA's result_analyzer.py, for a record whose metrics hold no "error", converts every value
in metrics with np.asarray(values, dtype=float) and takes min/median/max over it and mean/std over
values[1:] (repeat 0 left out): a scalar, a bool, a string or a dict there crashes it. So every value
in metrics is a list of one number per repeat; what is not (verification details, compile cache
state, dynamo counters, notes, per-op tables) is in top-level keys after verification_code, which
those readers ignore. Error and SKIP records keep the original's own {"error": str}.
"""
import os
import unittest

import numpy as np

from harness import FAULTY_RUNNER, RUNNER, SHARED_CACHE, OutputDirTest, read_records, run

REPEAT = 3
CORRECT_LIBRARY = os.environ.get("RELU_OVERRIDE_CORRECT", "../../build/tests/librelu_override_correct.so")
# The first seven keys of a record, in this order (xla_runner.md §5.2).
RECORD_KEYS = ["model", "experiment", "repeat", "iterations_per_run", "metrics", "timestamp",
               "verification_code"]


class AnalyzerShapeTest(OutputDirTest):
    def sweep(self, *args, env=None, binary=RUNNER, suite="dummy"):
        run(binary, f"--suite-name={suite}", "--accelerator=cpu", f"--repeat={REPEAT}",
            f"--cache-dir={SHARED_CACHE}", f"--output-dirname={self.out}", "--no-resume", *args,
            env=env, timeout=900)
        records = read_records(self.results)
        os.remove(self.results)
        self.assertTrue(records)
        return records

    def assert_analyzer_reads(self, record):
        """What result_analyzer.py does with a record works, and error records are the original's."""
        self.assertEqual(list(record)[:7], RECORD_KEYS)
        metrics = record["metrics"]
        if "error" in metrics:  # the original's failure record: the analyzer reads only the text
            self.assertEqual(list(metrics), ["error"])
            self.assertIsInstance(metrics["error"], str)
            return
        self.assertIn("total_time", metrics)
        for key, values in metrics.items():
            with self.subTest(key=key):
                array = np.asarray(values, dtype=float)  # raises on a dict or a text
                self.assertEqual(array.ndim, 1)
                self.assertEqual(len(array), record["repeat"])
                rest = values[1:]  # raises on a scalar
                self.assertEqual(len(rest), record["repeat"] - 1)
                np.mean(np.asarray(rest, dtype=float))
                array.min(), np.median(array), array.max()

    def assert_all_read(self, records):
        for record in records:
            with self.subTest(dynamo=record["experiment"]["dynamo"], xla=record["experiment"]["xla"],
                              test=record["experiment"]["test"]):
                self.assert_analyzer_reads(record)

    def test_backends_with_verify_accuracy_counters_profiling_and_ir_dumps(self):
        records = self.sweep("--xla=None", "--dynamo=None", "--dynamo=torchscript", "--dynamo=inductor",
                             "--test=eval", "--test=train", "--verify", "--metrics=accuracy",
                             "--collect-dynamo-counters", "--profile-cuda-cpu",
                             "--profile-cuda-cpu-individual-ops", "--profile-cupti",
                             "--dump-pytorch-profiles", "--save-ir-format=text")
        self.assertEqual(len(records), 6)
        self.assert_all_read(records)
        by_config = {(r["experiment"]["dynamo"], r["experiment"]["test"]): r for r in records}
        # inductor train: the joint forward+backward step compiled by AOTInductor, verified
        # against eager, its figures per-repeat lists as every other record's.
        inductor_train = by_config[("inductor", "train")]
        self.assertNotIn("error", inductor_train["metrics"])
        self.assertEqual(inductor_train["verification_code"], "PASS",
                         inductor_train.get("verification"))
        self.assertEqual(len(inductor_train["metrics"]["per_iter_time"]), REPEAT)
        eager, inductor = by_config[(None, "eval")], by_config[("inductor", "eval")]
        # The per-record data is there, at the top level.
        self.assertEqual(inductor["verification_code"], "PASS", inductor.get("verification"))
        for key in ("verification", "compile", "dynamo_counters", "accuracy", "profile"):
            self.assertIn(key, inductor)
        self.assertIn("ir_note", eager)
        self.assertIn("eager_ops", eager["profile"])
        # Numbers measured once: the value in repeat 0, zeros after it, as xla_CompileTime_time_s.
        compile_time = inductor["metrics"]["compile_time_s"]
        self.assertGreater(compile_time[0], 0)
        self.assertEqual(compile_time[1:], [0.0] * (REPEAT - 1))
        self.assertEqual(inductor["metrics"]["accuracy"][1:], [0.0] * (REPEAT - 1))
        self.assertEqual(len(eager["metrics"]["total_cpu_time_s"]), REPEAT)
        # Peak memory (the memory pass, on by default): host RSS for every backend that ran, one
        # positive value per repeat; the device figures absent on the CPU, with the reason.
        ran = [r for r in records if "error" not in r["metrics"]]
        self.assertEqual(len(ran), 6)  # every backend and test, inductor train included
        for record in ran:
            with self.subTest(dynamo=record["experiment"]["dynamo"], test=record["experiment"]["test"]):
                metrics, memory = record["metrics"], record["memory"]
                self.assertEqual(len(metrics["peak_host_rss_bytes"]), REPEAT)
                self.assertTrue(all(v > 0 for v in metrics["peak_host_rss_bytes"]))
                self.assertNotIn("peak_device_allocated_bytes", metrics)
                self.assertEqual(memory["device"], {"unavailable": "accelerator is cpu"})
                self.assertGreater(memory["parameters_bytes"], 0)
                self.assertEqual("optimizer_state_bytes" in memory,
                                 record["experiment"]["test"] == "train")

    def test_failed_timing_and_verifier_children(self):
        # A backend that raises in the timing child (an error record, with the verifier's
        # VERIFIER_DIDNT_RUN) and one that raises in the verifier only (EXCEPTION_RAISED).
        for backend, code in (("throw", "VERIFIER_DIDNT_RUN"), ("throw-in-verifier", "EXCEPTION_RAISED")):
            with self.subTest(backend=backend):
                env = dict(os.environ, BENCHMATRIX_TEST_BACKEND=backend)
                [record] = self.sweep("--filter=^two_outputs$", "--xla=None", "--dynamo=None",
                                      "--test=eval", "--verify", env=env, binary=FAULTY_RUNNER,
                                      suite="verifier_checks")
                self.assert_analyzer_reads(record)
                self.assertEqual(record["verification_code"], code)
                self.assertIn("failed on purpose", record["verification"]["error"]
                              if backend == "throw-in-verifier" else record["metrics"]["error"])

    def test_export_and_backend_library(self):
        exported = os.path.join(self.out, "export")
        records = self.sweep("--xla=None", "--dynamo=None", "--test=eval", "--verify", "--export=both",
                             f"--export-dir={exported}", f"--backend-library={CORRECT_LIBRARY}")
        self.assert_all_read(records)
        [record] = records
        self.assertEqual(record["backend_library"], os.path.abspath(CORRECT_LIBRARY))
        self.assertTrue(os.listdir(exported))

    def test_openxla(self):
        # Without a PJRT plugin its SKIP record, with BENCHMATRIX_XLA_EXPORT_ONLY the export's.
        env = {k: v for k, v in os.environ.items()
               if k not in ("BENCHMATRIX_PJRT_PLUGIN", "BENCHMATRIX_XLA_EXPORT_ONLY")}
        records = self.sweep("--xla=PJRT", "--dynamo=openxla", "--test=eval", "--verify", env=env)
        self.assert_all_read(records)
        self.assertTrue(all("error" in r["metrics"] for r in records))


if __name__ == "__main__":
    unittest.main()
