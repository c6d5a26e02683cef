"""experiment_runner --backend-library: a kernel library's aten overrides, checked on a real model."""
import os
import unittest

from harness import RUNNER, OutputDirTest, read_records, run

CORRECT = os.environ.get("RELU_OVERRIDE_CORRECT", "../../build/tests/librelu_override_correct.so")
WRONG = os.environ.get("RELU_OVERRIDE_WRONG", "../../build/tests/librelu_override_wrong.so")
COMMON = ["--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None", "--test=eval",
          "--repeat=2", "--verify"]


class BackendLibraryTest(OutputDirTest):
    def verify_with(self, library):
        run(RUNNER, *COMMON, f"--backend-library={library}", f"--output-dirname={self.out}",
            "--no-resume")
        [record] = read_records(self.results)
        return record

    def test_a_correct_override_passes_and_a_wrong_one_fails_verification(self):
        good = self.verify_with(CORRECT)
        self.assertEqual(good["verification_code"], "PASS", good.get("verification"))
        self.assertEqual(good["backend_library"], os.path.abspath(CORRECT))
        self.assertEqual(len(good["metrics"]["total_time"]), 2)
        # The references ran without the overrides: identity for relu changes the MLP's output.
        bad = self.verify_with(WRONG)
        self.assertEqual(bad["verification_code"], "FAIL", bad.get("verification"))

    def test_a_missing_library_is_a_usage_error(self):
        proc = run(RUNNER, *COMMON, "--backend-library=/nonexistent/kernels.so",
                   f"--output-dirname={self.out}", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("argument --backend-library: no such file: /nonexistent/kernels.so", proc.stderr)


if __name__ == "__main__":
    unittest.main()
