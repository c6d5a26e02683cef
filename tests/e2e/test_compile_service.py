"""The sweep's compile service (python -m benchmatrix_service, issue 22): the inductor compile
helpers of a sweep run in processes forked from one Python that imported torch once, so a second
compile spends no time importing; the records say the compile was served; a child killed during a
served compile (its timeout) takes the compile with it; --no-compile-service runs each helper as a
process of its own.

The package cache is fresh per test (every config compiles) while Inductor's own caches (ISA
probes, precompiled headers) are the per-user ones of the other inductor tests, so a compile takes
seconds, not a cold minute."""
import os
import re
import signal
import subprocess
import sys
import time
import unittest

from harness import RUNNER, SHARED_CACHE, OutputDirTest, read_records, run, wait_until_dead

# Two tiny models for the exported suite: two inductor configs, each a real compile.
TINY_MODELS = """
import sys, torch
torch.manual_seed(0)
for name, width in (("tiny_a", 8), ("tiny_b", 12)):
    net = torch.nn.Sequential(torch.nn.Linear(width, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    x = torch.randn(2, width)
    torch.jit.trace(net.eval(), (x,)).save(f"{sys.argv[1]}/{name}.pt")
    torch.save((x,), f"{sys.argv[1]}/{name}.inputs.pt")
"""


def group_members(group):
    """Live processes (not zombies) whose process group is `group`."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if fields[0] != "Z" and int(fields[2]) == group:
            members.append(int(entry))
    return members


class CompileServiceTest(OutputDirTest):
    def setUp(self):
        super().setUp()
        self.models = os.path.join(self.out, "models")
        os.makedirs(self.models)
        subprocess.run([sys.executable, "-c", TINY_MODELS, self.models], check=True)
        self.cache = os.path.join(self.out, "cache")
        os.makedirs(self.cache)
        shared = os.path.join(SHARED_CACHE, "compiler-caches")
        os.makedirs(shared, exist_ok=True)
        os.symlink(shared, os.path.join(self.cache, "compiler-caches"))
        self.service_log = os.path.join(self.out, "compile-service.log")

    def sweep_flags(self, *args):
        """The runner's flags for an inductor sweep of the two exported models, then `args`."""
        return ["--accelerator=cpu", "--xla=None", "--repeat=2", "--suite-name=exported",
                f"--model-path={self.models}", "--dynamo=inductor", "--test=eval",
                f"--output-dirname={self.out}", f"--cache-dir={self.cache}", "--no-resume", *args]

    def sweep(self, *args, check=True):
        return run(RUNNER, *self.sweep_flags(*args), timeout=900, check=check)

    def test_a_sweeps_compiles_are_served_and_the_second_imports_nothing(self):
        self.sweep("--verify")
        records = read_records(self.results)
        self.assertEqual([r["model"]["model_name"] for r in records], ["tiny_a", "tiny_b"])
        for record in records:
            name = record["model"]["model_name"]
            self.assertEqual(record["verification_code"], "PASS", record.get("verification"))
            self.assertIs(record["compile"]["cache_hit"], False, name)
            self.assertEqual(record["compile"]["helper"], "service", name)
            self.assertIn("service_s", record["compile"]["breakdown_s"], name)
        # The first request started the service's import of torch; the second found it done.
        first, second = (r["compile"]["breakdown_s"] for r in records)
        self.assertLess(second["import_s"], 0.5, second)
        self.assertLess(second["service_s"], 0.5, second)
        self.assertGreater(first["service_s"] + first["import_s"], second["import_s"], first)
        with open(self.service_log) as f:
            log = f.read()
        self.assertEqual(len(re.findall(r"started benchmatrix_compile as \d+", log)), 2, log)
        self.assertIn("stopped", log)  # the sweep stopped it at its end

    def test_without_the_service_each_helper_imports_torch(self):
        self.sweep("--no-compile-service", "--filter=^tiny_a$")
        (record,) = read_records(self.results)
        self.assertEqual(record["compile"]["helper"], "process")
        self.assertNotIn("service_s", record["compile"]["breakdown_s"])
        self.assertGreater(record["compile"]["breakdown_s"]["import_s"], 0.5)
        self.assertFalse(os.path.exists(self.service_log))

    def test_a_child_killed_during_a_served_compile_takes_the_compile_with_it(self):
        # The served compile is stopped (SIGSTOP to its group) as soon as the service logs it, so it
        # outlasts the child's timeout however fast this machine compiles; the child times out
        # waiting for it, and the service must SIGKILL the stopped compile when the child's
        # connection closes.
        sweep = subprocess.Popen(
            [RUNNER, *self.sweep_flags("--filter=^tiny_a$", "--subprocess-timeout=8",
                                       "--subprocess-grace-period=0.5")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            pid = self.wait_for_served_compile(sweep)
            os.killpg(pid, signal.SIGSTOP)
            output, _ = sweep.communicate(timeout=120)
        finally:
            if sweep.poll() is None:
                sweep.kill()
                sweep.communicate()
        self.assertEqual(sweep.returncode, 0, output)
        (record,) = read_records(self.results)
        self.assertIn("timed out after 8 seconds", record["metrics"]["error"])
        with open(self.service_log) as f:
            log = f.read()
        self.assertEqual(re.findall(r"started benchmatrix_compile as (\d+)", log), [str(pid)], log)
        # Killed when the child's connection closed, not only when the sweep stopped the service.
        self.assertIn(f"killed {pid}: its client went away", log)
        self.assertLess(log.index(f"killed {pid}"), log.index("stopped"), log)
        self.assertTrue(wait_until_dead(pid), f"the served compile {pid} outlived its child")
        self.assertEqual(group_members(pid), [], "its compile workers outlived it")

    def wait_for_served_compile(self, sweep, seconds=60):
        """The pid of the first compile the service starts, read from its log as soon as it appears."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if os.path.exists(self.service_log):
                with open(self.service_log) as f:
                    started = re.search(r"started benchmatrix_compile as (\d+)", f.read())
                if started:
                    return int(started.group(1))
            if sweep.poll() is not None:
                self.fail(f"the sweep ended before its compile was served:\n{sweep.stdout.read()}")
            time.sleep(0.01)
        self.fail(f"no served compile within {seconds} s")

if __name__ == "__main__":
    unittest.main()
