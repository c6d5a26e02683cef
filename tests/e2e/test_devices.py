"""--devices on the CPU: fake device lists (children pinned to no GPU, each slot on its own CPUs),
real concurrency."""
import json
import os
import time
import unittest

from harness import FAULTY_RUNNER, OutputDirTest, read_records, run

COMMON = ["--suite-name=faulty", "--accelerator=cpu", "--xla=None", "--dynamo=None", "--test=eval",
          "--repeat=2", "--subprocess-grace-period=0.5"]


def text(cpus):
    """The kernel's cpulist form of ascending CPUs: [0, 1, 2, 5] -> "0-2,5"."""
    runs = []
    for cpu in cpus:
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(f"{a}-{b}" if a != b else str(a) for a, b in runs)


class ConcurrentSweepTest(OutputDirTest):
    def test_two_children_at_once_with_planted_faults_keep_every_record_exactly_once(self):
        proc = run(FAULTY_RUNNER, *COMMON, "--devices=0,1", "--subprocess-timeout=3",
                   f"--output-dirname={self.out}")
        records = read_records(self.results)
        names = [r["model"]["model_name"] for r in records]
        self.assertEqual(sorted(names), sorted(set(names)), "a config was recorded twice")
        self.assertEqual(len(names), 10, names)
        by_model = {r["model"]["model_name"]: r for r in records}
        for healthy in ["a_healthy", "z_healthy", "crash_after_report"]:
            self.assertEqual(len(by_model[healthy]["metrics"]["total_time"]), 2, healthy)
        self.assertIn("SIGSEGV", by_model["crash_segfault"]["metrics"]["error"])
        self.assertIn("timed out after 3 seconds", by_model["hang_ignoring_sigterm"]["metrics"]["error"])
        self.assertIn("THE LAST LINE OF STDERR", by_model["huge_stderr"]["metrics"]["error"])
        self.assertIn("out of device memory", by_model["out_of_device_memory"]["metrics"]["error"])
        # Every record says where it ran; the two slots were both used, children overlapped
        # (concurrency is real), and no slot ever held two children.
        placements = [r["placement"] for r in records]
        self.assertEqual({p["device"] for p in placements}, {"0", "1"})
        self.assertTrue(any(p["children_beside"] >= 1 for p in placements), placements)
        self.assertTrue(all(p["children_beside"] <= 1 for p in placements), placements)
        self.assertTrue(all(p["host"] and p["wall_time_s"] > 0 for p in placements), placements)
        self.assertIn("nvidia-smi lists no GPU; 2 children run at once", proc.stderr)
        # Complete lines only: the file parses line by line (read_records) and ends with a newline.
        with open(self.results, encoding="utf-8") as f:
            self.assertTrue(f.read().endswith("\n"))

    def test_a_hanging_child_does_not_hold_up_the_other_slot(self):
        start = time.monotonic()
        run(FAULTY_RUNNER, *COMMON, "--devices=0,1", "--subprocess-timeout=20",
            "-k", "^(hang_ignoring_sigterm|a_healthy|z_healthy|crash_abort)$",
            f"--output-dirname={self.out}")
        records = read_records(self.results)
        # Records are written as configs finish: the three others finished (in the other slot, or
        # in the hang's slot before it took it) while the hang held its GPU for its 20 s timeout.
        self.assertEqual([r["model"]["model_name"] for r in records][-1], "hang_ignoring_sigterm")
        self.assertEqual(len(records), 4)
        hang = records[-1]["placement"]
        self.assertGreaterEqual(hang["wall_time_s"], 20)
        self.assertEqual(hang["children_beside"], 1)
        self.assertLess(time.monotonic() - start, 20 + 15)

    def test_verifier_runs_on_its_configs_device_and_merges_into_one_record(self):
        run(FAULTY_RUNNER, *COMMON, "--devices=0,1", "--verify", "-k", "^(a_healthy|z_healthy)$",
            f"--output-dirname={self.out}")
        records = read_records(self.results)
        self.assertEqual(len(records), 2)
        for r in records:
            self.assertNotEqual(r["verification_code"], "VERIFIER_SKIPPED", r)
            self.assertNotEqual(r["verification_code"], "VERIFIER_DIDNT_RUN", r)
            self.assertIn(r["placement"]["device"], ("0", "1"))

    @unittest.skipIf(len(os.sched_getaffinity(0)) < 2, "needs two CPUs to give each slot its own")
    def test_each_devices_children_run_on_their_own_share_of_the_cpus(self):
        # Four verifiers at once, each with an intra-op pool as large as the host, ran past their
        # timeout on a 64-CPU H200 host: each slot's children get a contiguous share of the CPUs
        # and an OpenMP pool of that size, timing child and verifier alike.
        cpus = sorted(os.sched_getaffinity(0))
        env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
        proc = run(FAULTY_RUNNER, *COMMON, "--devices=0,1", "--verify", "-k", "^(a_healthy|z_healthy)$",
                   f"--output-dirname={self.out}", env=env)
        half = (len(cpus) + 1) // 2
        shares = {"0": cpus[:half], "1": cpus[half:]}
        self.assertIn(f"each device's children run on their own CPUs (0: {text(shares['0'])}, "
                      f"1: {text(shares['1'])})", proc.stderr)
        records = read_records(self.results)
        self.assertEqual(len(records), 2)
        for r in records:
            share = shares[r["placement"]["device"]]
            self.assertEqual(r["run_environment"]["cpu_affinity"], text(share), r["run_environment"])
            self.assertEqual(r["run_environment"]["threads"]["OMP_NUM_THREADS"], str(len(share)))
            self.assertEqual(r["run_environment"]["threads"]["intra_op"], len(share))
            self.assertEqual(r["verification_code"], "PASS", r["verification"])
        # a user's own OMP_NUM_THREADS wins; one slot (or --exclusive) pins nothing
        os.remove(self.results)
        run(FAULTY_RUNNER, *COMMON, "--devices=0,1", "-k", "^a_healthy$",
            f"--output-dirname={self.out}", env=dict(env, OMP_NUM_THREADS="3"))
        self.assertEqual(read_records(self.results)[0]["run_environment"]["threads"]["OMP_NUM_THREADS"],
                         "3")
        os.remove(self.results)
        proc = run(FAULTY_RUNNER, *COMMON, "--devices=0", "-k", "^a_healthy$",
                   f"--output-dirname={self.out}", env=env)
        self.assertNotIn("their own CPUs", proc.stderr)
        self.assertEqual(read_records(self.results)[0]["run_environment"]["cpu_affinity"], text(cpus))

    def test_exclusive_runs_one_child_at_a_time(self):
        run(FAULTY_RUNNER, *COMMON, "--devices=0,1", "--exclusive",
            "-k", "^(a_healthy|z_healthy|crash_abort)$", f"--output-dirname={self.out}")
        placements = [r["placement"] for r in read_records(self.results)]
        self.assertEqual(len(placements), 3)
        self.assertTrue(all(p["children_beside"] == 0 and p["device"] == "0" for p in placements),
                        placements)

    def test_expected_times_start_the_longest_config_first(self):
        earlier = os.path.join(self.out, "earlier.jsonl")
        with open(earlier, "w", encoding="utf-8") as f:
            for model, seconds in [("a_healthy", 1.0), ("z_healthy", 100.0), ("crash_abort", 10.0)]:
                f.write(json.dumps({
                    "model": {"suite_name": "faulty", "model_name": model},
                    "experiment": {"accelerator": "cpu", "accelerator_model": "another host's CPU",
                                   "xla": None, "xla_flags": None, "dynamo": None, "torch_xla2": None,
                                   "keep_model_data_on_cuda": False, "test": "eval", "batch_size": 2,
                                   "enable_functionalization": False},
                    "repeat": 2, "iterations_per_run": 1, "metrics": {"total_time": [seconds, seconds]},
                    "timestamp": 1.0, "verification_code": "VERIFIER_SKIPPED"}) + "\n")
        # One slot, so the record order is the start order. throw_error has no earlier time: first.
        proc = run(FAULTY_RUNNER, *COMMON, "--devices=0", f"--expected-times={earlier}",
                   "-k", "^(a_healthy|z_healthy|crash_abort|throw_error)$",
                   f"--output-dirname={self.out}")
        names = [r["model"]["model_name"] for r in read_records(self.results)]
        self.assertEqual(names, ["throw_error", "z_healthy", "crash_abort", "a_healthy"])
        self.assertIn("--expected-times: 3 timed configs", proc.stderr)

    def test_bad_device_lists_and_flags_are_usage_errors(self):
        for args, message in [
            (["--devices=all"], "'all' needs GPUs, and nvidia-smi lists none"),
            (["--devices=0,0"], "GPU 0 is listed twice"),
            (["--devices=0,x"], "bad item 'x'"),
            (["--exclusive"], "argument --exclusive: only with --devices"),
            (["--devices=0", "--expected-times=/nonexistent/results.jsonl"],
             "argument --expected-times: no results file /nonexistent/results.jsonl"),
        ]:
            proc = run(FAULTY_RUNNER, *COMMON, *args, f"--output-dirname={self.out}", check=False)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertIn(message, proc.stderr, args)
        self.assertFalse(os.path.exists(self.results))


if __name__ == "__main__":
    unittest.main()
