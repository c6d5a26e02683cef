"""--verify: a verifier child after each timing child; its code and figures land in the same record."""
import os
import unittest

from harness import FAULTY_RUNNER, RUNNER, OutputDirTest, read_records, run

COMMON = ["--suite-name=verifier_checks", "--accelerator=cpu", "--xla=None", "--dynamo=None",
          "--repeat=2", "--verify", f"--subprocess-grace-period=0.5"]


class VerifyTest(OutputDirTest):
    def sweep(self, *args, backend=None):
        env = dict(os.environ)
        env.pop("BENCHMATRIX_TEST_BACKEND", None)
        if backend:
            env["BENCHMATRIX_TEST_BACKEND"] = backend
        run(FAULTY_RUNNER, *COMMON, *args, f"--output-dirname={self.out}", "--no-resume", env=env)
        return {(r["model"]["model_name"], r["experiment"]["test"]): r for r in read_records(self.results)}

    def test_backend_within_tolerance_passes_and_beyond_fails(self):
        for amount, code in (("1e-4", "PASS"), ("0.5", "FAIL")):
            with self.subTest(amount=amount):
                records = self.sweep("--filter=^two_outputs$", "--test=eval", "--test=train",
                                     backend=f"perturb:{amount}")
                self.assertEqual(len(records), 2)
                for test in ("eval", "train"):
                    record = records[("two_outputs", test)]
                    self.assertEqual(record["verification_code"], code, record)
                    # one line carries the timings and the verdict with its figures
                    self.assertEqual(len(record["metrics"]["total_time"]), 2)
                    details = record["metrics"]["verification"]
                    self.assertIn("max_abs_error", details)
                    self.assertIn("rmse_vs_fp64", details)
                    self.assertIn("cosine_similarity", details)
                if code == "FAIL":
                    details = records[("two_outputs", "eval")]["metrics"]["verification"]
                    # the perturbed output is the second one, and its error is the amount
                    self.assertEqual(details["worst_output"], "output[1]")
                    self.assertAlmostEqual(details["max_abs_error"], 0.5, delta=0.01)
                    self.assertIn("RMSE", details["message"])

    def test_faulty_models_and_backends_get_their_codes(self):
        records = self.sweep("--test=eval", "--subprocess-timeout=20")
        code = {model: r["verification_code"] for (model, _), r in records.items()}
        self.assertEqual(code["two_outputs"], "PASS")
        self.assertEqual(code["nondeterministic_output"], "NONDETERMINISTIC_EAGER_RUN")
        self.assertEqual(code["eager_throws"], "EAGER_FAILED")
        self.assertIn("eager forward failed on purpose",
                      records[("eager_throws", "eval")]["metrics"]["verification"]["error"])
        # the verifier hung and was killed; the timing record survives and the sweep went on
        hung = records[("hangs_in_verifier", "eval")]
        self.assertEqual(hung["verification_code"], "VERIFIER_DIDNT_RUN")
        self.assertIn("timed out", hung["metrics"]["verification"]["error"])
        self.assertEqual(len(hung["metrics"]["total_time"]), 2)

        thrown = self.sweep("--filter=^two_outputs$", "--test=eval", backend="throw")
        record = thrown[("two_outputs", "eval")]
        self.assertEqual(record["verification_code"], "EXCEPTION_RAISED")
        self.assertIn("failed on purpose", record["metrics"]["verification"]["error"])

    def test_without_verify_the_code_stays_skipped(self):
        run(FAULTY_RUNNER, "--suite-name=verifier_checks", "--accelerator=cpu", "--xla=None",
            "--dynamo=None", "--test=eval", "--repeat=1", "--filter=^two_outputs$",
            f"--output-dirname={self.out}")
        [record] = read_records(self.results)
        self.assertEqual(record["verification_code"], "VERIFIER_SKIPPED")
        self.assertNotIn("verification", record["metrics"])

    def test_real_models_pass_against_themselves(self):
        # A faithful eager backend agrees with itself and with float64 within tolerance.
        run(RUNNER, "--suite-name=torchbench", "--accelerator=cpu", "--xla=None", "--dynamo=None",
            "--test=eval", "--test=train", "--filter=^(resnet18|squeezenet1_1|nanogpt)$",
            "--batch-size=2", "--repeat=1", "--verify", f"--output-dirname={self.out}")
        records = read_records(self.results)
        self.assertGreaterEqual(len(records), 5)
        for record in records:
            self.assertEqual(record["verification_code"], "PASS",
                             (record["model"]["model_name"], record["experiment"]["test"],
                              record["metrics"].get("verification")))


if __name__ == "__main__":
    unittest.main()
