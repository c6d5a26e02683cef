"""--slurm against a real single-node Slurm cluster (slurm-wlm + munge on localhost, started here)."""
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest

from harness import FAULTY_RUNNER, RUNNER, OutputDirTest, read_records, run, sweep_child_jobs

CLUSTER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "slurm",
                              "local_cluster.sh")
FAULTY = ["--suite-name=faulty", "--accelerator=cpu", "--xla=None", "--dynamo=None", "--test=eval",
          "--repeat=2", "--subprocess-grace-period=0.5"]


def setUpModule():
    global CLUSTER_DIR
    CLUSTER_DIR = tempfile.mkdtemp(prefix="benchmatrix-slurm-")
    proc = subprocess.run([CLUSTER_SCRIPT, "start", CLUSTER_DIR], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode == 77:
        raise unittest.SkipTest(proc.stderr.strip())
    if proc.returncode != 0:
        raise RuntimeError(f"local Slurm cluster did not start:\n{proc.stdout}\n{proc.stderr}")
    os.environ["SLURM_CONF"] = os.path.join(CLUSTER_DIR, "slurm.conf")


def tearDownModule():
    subprocess.run([CLUSTER_SCRIPT, "stop", CLUSTER_DIR], timeout=60)
    subprocess.run(["rm", "-rf", CLUSTER_DIR])


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def squeue(*args):
    return subprocess.run(["squeue", "-h", *args], capture_output=True, text=True, check=True).stdout


def hanging_child_ignores_sigterm(output_dir):
    """Whether the hang_ignoring_sigterm child of the sweep writing to `output_dir` runs and has
    set SIGTERM to ignored (its SigIgn bit): before that, a SIGTERM kills it like any child, and
    its task writes that death's record instead of ending without one."""
    for pid, job in sweep_child_jobs().items():
        try:
            with open(job, encoding="utf-8") as f:
                text = f.read()
            if "hang_ignoring_sigterm" not in text or output_dir not in text:
                continue
            with open(f"/proc/{pid}/status") as f:
                ignored = next(line.split()[1] for line in f if line.startswith("SigIgn:"))
            if int(ignored, 16) & (1 << (signal.SIGTERM - 1)):
                return True
        except (OSError, StopIteration):
            continue  # gone meanwhile, or not ours to read
    return False


def wait_until(condition, what, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}; squeue:\n{squeue()}")


class SlurmSweepTest(OutputDirTest):
    def test_array_sweep_merges_every_task_and_a_rerun_submits_nothing(self):
        # faulty's 9 sorted models in 3 partitions: a_healthy | crash_segfault | z_healthy.
        args = [*FAULTY, "-k", "^(a_healthy|crash_segfault|z_healthy)$", "--slurm",
                "--slurm-tasks=3", f"--output-dirname={self.out}"]
        proc = run(FAULTY_RUNNER, *args, "--slurm-wait", timeout=600)
        self.assertRegex(proc.stdout, r"Submitted array job \d+ \(3 task\(s\)")
        records = read_records(self.results)
        by_model = {r["model"]["model_name"]: r for r in records}
        self.assertEqual([r["model"]["model_name"] for r in records],
                         ["a_healthy", "crash_segfault", "z_healthy"])
        self.assertEqual(len(by_model["a_healthy"]["metrics"]["total_time"]), 2)
        self.assertEqual(len(by_model["z_healthy"]["metrics"]["total_time"]), 2)
        self.assertIn("SIGSEGV", by_model["crash_segfault"]["metrics"]["error"])
        for p in range(3):  # each task wrote its own results file and log
            self.assertEqual(len(read_records(os.path.join(self.out, "slurm", f"task-{p}",
                                                           "results.jsonl"))), 1)
            self.assertTrue(os.path.exists(os.path.join(self.out, "slurm", "logs", f"task-{p}.log")))
        self.assertIn("a_healthy", proc.stdout)  # the summary table of the merged results
        self.assertTrue(os.path.exists(os.path.join(self.out, "run_context.json")))

        # Resume: everything has a record, so nothing is submitted; the merge is redone locally.
        before = read_text(self.results)
        again = run(FAULTY_RUNNER, *args)
        self.assertIn("every config has a record; merging without submitting", again.stderr)
        self.assertNotIn("Submitted", again.stdout)
        self.assertEqual(read_text(self.results), before)

    def test_a_cancelled_task_leaves_an_error_record_and_is_resubmitted_alone(self):
        # Partitions of 3: task 0 runs a_healthy, task 1 hangs until it is cancelled.
        args = [*FAULTY, "-k", "^(a_healthy|hang_ignoring_sigterm)$", "--slurm", "--slurm-tasks=3",
                "--subprocess-timeout=600", f"--output-dirname={self.out}"]
        proc = run(FAULTY_RUNNER, *args)
        array_job = re.search(r"Submitted array job (\d+)", proc.stdout).group(1)
        merge_job = re.search(r"merge job (\d+)", proc.stdout).group(1)
        task_log = os.path.join(self.out, "slurm", "logs", "task-1.log")
        wait_until(lambda: os.path.exists(task_log) and
                   "hang_ignoring_sigterm" in read_text(task_log) and
                   hanging_child_ignores_sigterm(self.out),
                   "task 1's hanging child to ignore SIGTERM")
        subprocess.run(["scancel", f"{array_job}_1"], check=True)
        wait_until(lambda: squeue("-j", f"{array_job},{merge_job}").strip() == "",
                   "the array and the merge job to end")

        records = read_records(self.results)
        by_model = {r["model"]["model_name"]: r for r in records}
        self.assertEqual(sorted(by_model), ["a_healthy", "hang_ignoring_sigterm"])
        self.assertEqual(len(by_model["a_healthy"]["metrics"]["total_time"]), 2)
        hang = by_model["hang_ignoring_sigterm"]
        self.assertIn("no record: Slurm array task 1 ended before this config finished",
                      hang["metrics"]["error"])
        self.assertEqual(hang["verification_code"], "VERIFIER_DIDNT_RUN")
        # The task's own file has no record for it, so a rerun would submit task 1 only.
        dry = run(FAULTY_RUNNER, *args, "--dry-run")
        self.assertIn("#SBATCH --array=1\n", dry.stdout)
        self.assertIn("--slurm-merge", dry.stdout)
        self.assertIn("1 without a record, in 1 array task(s)", dry.stderr)

    def test_dry_run_prints_scripts_and_partition_flags_are_refused(self):
        proc = run(FAULTY_RUNNER, *FAULTY, "-k", "^(a_healthy|z_healthy)$", "--slurm",
                   "--slurm-partition=debug", "--slurm-time=0:10:00",
                   "--slurm-sbatch-arg=--account=nightly", "--dry-run", f"--output-dirname={self.out}")
        self.assertIn("#SBATCH --array=0,8\n", proc.stdout)  # 9 tasks by default, one model each
        for line in ["#SBATCH --partition=debug", "#SBATCH --time=0:10:00", "#SBATCH --account=nightly",
                     "--slurm-task", "\"--partition-id=${SLURM_ARRAY_TASK_ID}\""]:
            self.assertIn(line, proc.stdout)
        self.assertNotIn("--gpus-per-task", proc.stdout)  # a CPU sweep asks for no GPU
        self.assertEqual(squeue(), "")
        self.assertFalse(os.path.exists(os.path.join(self.out, "slurm")))
        for bad, message in [(["--slurm", "--partition-id=1", "--total-partitions=2"],
                              "--slurm partitions the models itself"),
                             (["--slurm-wait"], "argument --slurm-wait: only with --slurm"),
                             (["--slurm", "--slurm-tasks=12"], "must be in 1..9")]:
            proc = run(FAULTY_RUNNER, *FAULTY, *bad, f"--output-dirname={self.out}", check=False)
            self.assertEqual(proc.returncode, 2, bad)
            self.assertIn(message, proc.stderr)

    def test_dummy_sweep_gets_a_merged_report(self):
        proc = run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None",
                   "--test=eval", "--repeat=2", "--slurm",
                   "--slurm-wait", f"--output-dirname={self.out}", timeout=600)
        self.assertIn("Submitted array job", proc.stdout)
        records = read_records(self.results)
        self.assertEqual(len(records), len({(r["experiment"]["dynamo"], r["experiment"]["test"])
                                            for r in records}))
        self.assertTrue(all("error" not in r["metrics"] or r["metrics"]["error"].startswith("SKIP")
                            for r in records), records)
        wait_until(lambda: os.path.exists(os.path.join(self.out, "report.html")), "the HTML report", 60)


if __name__ == "__main__":
    unittest.main()
