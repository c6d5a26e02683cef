"""A sweep whose parent is SIGKILLed leaves no child and no temporary directory behind, and a rerun
completes it with one record per config; SIGHUP (the terminal closed) stops it like SIGTERM."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from harness import FAULTY_RUNNER, OutputDirTest, read_records, run, sweep_child_jobs

ARGS = ["--suite-name=faulty", "-k", "a_healthy|hang_ignoring_sigterm|z_healthy",
        "--accelerator=cpu", "--xla=None", "--dynamo=None", "--test=eval", "--repeat=1",
        "--subprocess-grace-period=0.5"]


def child_models_under(folder):
    """The model_name of each running sweep child whose job file lies under `folder`."""
    models = []
    for job in sweep_child_jobs().values():
        if job.startswith(folder + os.sep):
            try:
                with open(job) as f:
                    models.append(json.load(f)["model_name"])
            except (OSError, ValueError, KeyError):
                continue
    return models


def processes_mentioning(*texts):
    """Pids of the processes (not zombies) whose command line contains every one of `texts`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().decode(errors="replace")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(") ", 1)[1][0]
        except OSError:
            continue
        if all(text in cmdline for text in texts) and state != "Z":
            found.append(int(pid))
    return found


class ParentDeathTest(OutputDirTest):
    def setUp(self):
        super().setUp()
        # The sweep's scratch directory (benchmatrix-*) goes here: nothing else writes into it.
        self.tmpdir = tempfile.mkdtemp(prefix="benchmatrix-e2e-tmpdir-")
        self.env = dict(os.environ, TMPDIR=self.tmpdir)
        self.args = [*ARGS, f"--output-dirname={self.out}"]

    def sweep_processes(self):
        """The parent (its argv names the output directory) and its children (their job files
        under <TMPDIR>/benchmatrix-*/)."""
        children = {pid for pid, job in sweep_child_jobs().items()
                    if job.startswith(self.tmpdir + os.sep)}
        return sorted(set(processes_mentioning(self.out)) | children)

    def tearDown(self):
        for pid in self.sweep_processes():  # only if the test failed
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        super().tearDown()

    def start_sweep_and_wait_for_the_hang(self):
        parent = subprocess.Popen([FAULTY_RUNNER, *self.args, "--subprocess-timeout=600"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                  env=self.env)
        deadline = time.time() + 120
        while time.time() < deadline and not (os.path.exists(self.results) and
                                              os.path.getsize(self.results) > 0):
            time.sleep(0.1)
        time.sleep(1.0)  # the hanging child is running now
        self.assertIn("hang_ignoring_sigterm", child_models_under(self.tmpdir),
                      "the sweep's hanging child is not running")
        self.assertTrue(os.listdir(self.tmpdir), "the sweep made no scratch directory")
        return parent

    def assert_nothing_left(self):
        deadline = time.time() + 10
        while time.time() < deadline and (self.sweep_processes() or os.listdir(self.tmpdir)):
            time.sleep(0.1)
        self.assertEqual(self.sweep_processes(), [], "processes of the sweep survived it")
        self.assertEqual(os.listdir(self.tmpdir), [], "temporary directories were left behind")

    def test_sigkill_of_the_parent_leaves_no_child_and_no_temp_dir_and_a_rerun_completes(self):
        parent = self.start_sweep_and_wait_for_the_hang()
        parent.kill()
        parent.communicate(timeout=60)
        self.assertEqual(parent.returncode, -signal.SIGKILL)
        self.assert_nothing_left()
        self.assertEqual([r["model"]["model_name"] for r in read_records(self.results)], ["a_healthy"])

        proc = run(FAULTY_RUNNER, *self.args, "--subprocess-timeout=2", env=self.env)
        self.assertIn("SKIP already completed benchmark", proc.stderr)
        names = [r["model"]["model_name"] for r in read_records(self.results)]
        self.assertEqual(names, ["a_healthy", "hang_ignoring_sigterm", "z_healthy"])
        self.assert_nothing_left()

    def test_sighup_stops_the_child_keeps_finished_records_and_exits_like_sigterm(self):
        parent = self.start_sweep_and_wait_for_the_hang()
        started = time.time()
        parent.send_signal(signal.SIGHUP)
        _, stderr = parent.communicate(timeout=60)
        self.assertEqual(parent.returncode, 130, stderr[-3000:])
        self.assertLess(time.time() - started, 20)
        self.assertIn("Interrupted: stopped hang_ignoring_sigterm", stderr)
        self.assertEqual([r["model"]["model_name"] for r in read_records(self.results)], ["a_healthy"])
        self.assert_nothing_left()


if __name__ == "__main__":
    import unittest
    unittest.main()
