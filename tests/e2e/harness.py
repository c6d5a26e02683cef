"""Shared helpers of the end-to-end tests: run the real binaries, read results.jsonl."""
import json
import os
import subprocess
import tempfile
import time
import unittest

RUNNER = os.environ.get("EXPERIMENT_RUNNER", "../../build/experiment_runner")
FAULTY_RUNNER = os.environ.get("FAULTY_RUNNER", "../../build/tests/experiment_runner_with_faults")
# Compiled backends' packages (AOTInductor: tens of seconds per compile on a small machine) are
# cached per user across test runs, as a user's would be; tests that need a cold cache use their own.
SHARED_CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                            "benchmatrix", "test-compile-cache")


def run(binary, *args, timeout=600, check=True, **kwargs):
    """Runs a binary; returns the CompletedProcess (text). Fails the test on a non-zero exit if check."""
    proc = subprocess.run([binary, *args], capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and proc.returncode != 0:
        raise AssertionError(f"{binary} {' '.join(args)} exited {proc.returncode}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-5000:]}")
    return proc


def wait_until_dead(pid, seconds=10):
    """True once `pid` is gone or a zombie (killed, waiting for init to reap it)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


def sweep_child_jobs():
    """{pid: job file} of the running sweep children (not zombies), exec'd or forked from their
    sweep alike: a child's stdout is <scratch>/config-N[-verifier]/stdout, its job.json beside it
    (a forked child's command line is its sweep's, so it cannot be told by `--job=`)."""
    jobs = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stdout = os.readlink(f"/proc/{pid}/fd/1")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(") ", 1)[1][0]
        except OSError:
            continue  # gone meanwhile, or not ours to read
        job = os.path.join(os.path.dirname(stdout), "job.json")
        if state != "Z" and os.path.basename(stdout) == "stdout" and os.path.exists(job):
            jobs[int(pid)] = job
    return jobs


def read_records(path):
    """Every line of a results file, parsed (Python's json accepts the NaN tokens we may write)."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class OutputDirTest(unittest.TestCase):
    """A test with a fresh output directory in self.out and its results file in self.results."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="benchmatrix-e2e-")
        self.out = self._tmp.name
        self.results = os.path.join(self.out, "results.jsonl")

    def tearDown(self):
        self._tmp.cleanup()
