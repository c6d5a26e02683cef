"""Children that crash, hang, throw, run out of device memory, exit silently or flood stderr each cost
exactly one record."""
import os
import time
import unittest

from harness import FAULTY_RUNNER, OutputDirTest, read_records, run


class FaultySweepTest(OutputDirTest):
    def test_every_config_gets_exactly_one_correct_record(self):
        proc = run(FAULTY_RUNNER, "--suite-name=faulty", "--accelerator=cpu", "--xla=None",
                   "--dynamo=None", "--test=eval", "--repeat=2", "--subprocess-timeout=3",
                   "--subprocess-grace-period=0.5", f"--output-dirname={self.out}")
        records = read_records(self.results)
        by_model = {r["model"]["model_name"]: r for r in records}
        self.assertEqual(len(records), 10, [r["model"]["model_name"] for r in records])
        self.assertEqual(len(by_model), 10)

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
        # Out of device memory (planted: the step throws c10::OutOfMemoryError on the CPU): the
        # child's own record says so first, with what the allocator could tell, and the child
        # exits cleanly; z_healthy, after it in the sweep, still ran (checked above).
        oom = error("out_of_device_memory")
        self.assertTrue(oom.startswith("out of device memory (the config runs on cpu: no device "
                                       "allocator figures)\n"), oom)
        self.assertIn("CUDA out of memory. Tried to allocate 20.00 GiB (planted", oom)
        self.assertNotIn("exited with status", oom)


class MemoryPassOutsideTheTimedRepeatsTest(OutputDirTest):
    def test_the_memory_pass_steps_are_not_timed(self):
        # Every forward call after the third sleeps 250 ms: with --repeat=3 (one step each) the
        # timed repeats make calls 1-3 and the memory pass calls 4-6, so the timed per_iter_time
        # stays far below 250 ms only because the pass runs after the timed loop, while the sweep
        # itself takes the pass's 0.75 s longer.
        env = dict(os.environ, BENCHMATRIX_TEST_SLOW_AFTER_CALLS="3")
        started = time.monotonic()
        run(FAULTY_RUNNER, "--suite-name=faulty", "--filter=^a_healthy$", "--accelerator=cpu",
            "--xla=None", "--dynamo=None", "--test=eval", "--repeat=3", "--no-resume",
            f"--output-dirname={self.out}", env=env)
        elapsed = time.monotonic() - started
        [record] = read_records(self.results)
        metrics = record["metrics"]
        self.assertEqual(len(metrics["peak_host_rss_bytes"]), 3)  # the pass ran its 3 repeats
        self.assertLess(max(metrics["per_iter_time"]), 0.2, metrics["per_iter_time"])
        self.assertGreater(elapsed, 0.75)
        self.assertEqual(record["memory"]["device"], {"unavailable": "accelerator is cpu"})
        # --no-memory-pass: no pass, so no slow calls, no figures and no memory key
        os.remove(self.results)
        run(FAULTY_RUNNER, "--suite-name=faulty", "--filter=^a_healthy$", "--accelerator=cpu",
            "--xla=None", "--dynamo=None", "--test=eval", "--repeat=3", "--no-resume",
            "--no-memory-pass", f"--output-dirname={self.out}", env=env)
        [record] = read_records(self.results)
        self.assertEqual(list(record["metrics"]), ["total_time", "per_iter_time"])
        self.assertNotIn("memory", record)


if __name__ == "__main__":
    unittest.main()
