"""Children that crash, hang, throw, exit silently or flood stderr each cost exactly one record."""
import unittest

from harness import FAULTY_RUNNER, OutputDirTest, read_records, run


class FaultySweepTest(OutputDirTest):
    def test_every_config_gets_exactly_one_correct_record(self):
        proc = run(FAULTY_RUNNER, "--suite-name=faulty", "--accelerator=cpu", "--xla=None",
                   "--dynamo=None", "--test=eval", "--repeat=2", "--subprocess-timeout=3",
                   "--subprocess-grace-period=0.5", f"--output-dirname={self.out}")
        records = read_records(self.results)
        by_model = {r["model"]["model_name"]: r for r in records}
        self.assertEqual(len(records), 9, [r["model"]["model_name"] for r in records])
        self.assertEqual(len(by_model), 9)

        def error(model):
            record = by_model[model]
            self.assertEqual(record["verification_code"], "VERIFIER_DIDNT_RUN")
            # parent-written records carry accelerator_model too (resume depends on it)
            self.assertTrue(record["experiment"]["accelerator_model"])
            return record["metrics"]["error"]

        for healthy in ["a_healthy", "z_healthy", "crash_after_report"]:
            self.assertEqual(len(by_model[healthy]["metrics"]["total_time"]), 2, healthy)
        self.assertIn("killed by signal SIGSEGV (Segmentation fault)", error("crash_segfault"))
        self.assertIn("killed by signal SIGABRT (Aborted)", error("crash_abort"))
        self.assertRegex(error("hang_ignoring_sigterm"),
                         r"^Command '\[.*experiment_runner_with_faults', .*\]' timed out after 3 seconds$")
        self.assertIn("model construction failed on purpose", error("throw_error"))
        self.assertIn("exited with status 1", error("throw_error"))
        self.assertIn("exited with status 0 without reporting a record", error("exit_zero_without_record"))
        huge = error("huge_stderr")
        self.assertIn("exited with status 3", huge)
        self.assertIn("THE LAST LINE OF STDERR", huge)
        self.assertIn("earlier bytes of stderr omitted", huge)
        self.assertLess(len(huge), 40 * 1024)
        self.assertIn("after reporting its record", proc.stderr)


if __name__ == "__main__":
    unittest.main()
