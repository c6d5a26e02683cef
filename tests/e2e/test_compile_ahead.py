"""--compile-ahead=N: the sweep's compiled configs are compiled before the timed sweep, N at a
time, each compile on its own share of the runner's CPUs; the timed children (and verifiers) load
what was built, and their records keep the compile's figures under compile.ahead. A compile that
fails ahead costs nothing but a log line: the timing child reports it as without the flag."""
import os
import sys
import unittest

from harness import RUNNER, OutputDirTest, read_records, run
HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_list(cpus):
    """The kernel's cpulist text of a set of CPUs ("0-3,8")."""
    ordered, runs = sorted(cpus), []
    for cpu in ordered:
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def by_test(records):
    return {r["experiment"]["test"]: r for r in records}


class CompileAheadTest(OutputDirTest):
    def sweep(self, *args, env=None, check=True):
        return run(RUNNER, "--accelerator=cpu", "--xla=None", "--repeat=2", "--suite-name=dummy",
                   f"--output-dirname={self.out}", f"--cache-dir={os.path.join(self.out, 'cache')}",
                   "--no-resume", *args, env=env, timeout=1500, check=check)

    def test_cold_compiles_run_ahead_in_parallel_on_their_own_cpus_and_are_loaded(self):
        log = os.path.join(self.out, "compiles.log")
        env = dict({k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"},
                   BENCHMATRIX_PYTHON=os.path.join(HERE, "cpu_recording_compile_helper.sh"),
                   REAL_PYTHON=os.environ.get("BENCHMATRIX_PYTHON", sys.executable),
                   COMPILE_CPU_LOG=log)
        output = self.sweep("--dynamo=inductor", "--dynamo=None", "--test=eval", "--test=train",
                            "--compile-ahead=2", "--cold-start", "--verify", "--no-compile-service",
                            env=env).stderr
        self.assertIn("--compile-ahead: compiling 2 config(s), 2 at once", output)
        self.assertIn("--compile-ahead: 2 of 2 config(s) ready", output)
        # Compiled once each, ahead: neither the timing child nor the verifier compiled again.
        with open(log) as f:
            compiles = f.read().splitlines()
        self.assertEqual(len(compiles), 2, compiles)
        available = len(os.sched_getaffinity(0))
        shares = [line.split()[0].removeprefix("cpus=") for line in compiles]
        if available >= 2:  # one CPU each on a 2-core machine, disjoint shares on any
            cpu_sets = [set(map(int, share.replace("-", ",").split(","))) for share in shares]
            self.assertFalse(cpu_sets[0] & cpu_sets[1], shares)
            # OpenMP's pool sized to the share (it is sized before the child narrows its CPUs)
            for line in compiles:
                cpus = line.split()[0].removeprefix("cpus=")
                count = sum(int(b) - int(a) + 1 if "-" in part else 1
                            for part in cpus.split(",") for a, _, b in [part.partition("-")])
                self.assertIn(f"omp={count} ", line)
        records = read_records(self.results)
        compiled = by_test(r for r in records if r["experiment"]["dynamo"] == "inductor")
        for test, record in compiled.items():
            self.assertEqual(record["verification_code"], "PASS", test)
            self.assertIs(record["compile"]["cache_hit"], True, test)
            ahead = record["compile"]["ahead"]
            self.assertIs(ahead["cache_hit"], False, test)
            self.assertGreater(ahead["compile_helper_s"], 0, test)
            self.assertGreaterEqual(ahead["compile_time_s"], ahead["compile_helper_s"], test)
            self.assertEqual(ahead["jobs"], 2, test)
            self.assertIn(ahead["cpus"], shares, test)
            self.assertEqual(ahead["package"], record["compile"]["package"], test)
            # the verifier loaded the same cached package, and its record says so
            self.assertIs(record["verification"]["cache_hit"], True, test)
            # the timed child only loaded the package: far less than the compile it was spared
            self.assertLess(record["metrics"]["compile_time_s"][0], ahead["compile_time_s"], test)
        # eager compiles nothing: not compiled ahead, its records as ever
        for record in (r for r in records if r["experiment"]["dynamo"] is None):
            self.assertNotIn("compile", record)

    def test_a_compile_that_fails_ahead_is_reported_by_its_timing_child(self):
        env = dict(os.environ, BENCHMATRIX_PYTHON=os.path.join(HERE, "failing_compile_helper.sh"))
        output = self.sweep("--dynamo=inductor", "--test=eval", "--compile-ahead=1",
                            "--no-compile-service", env=env).stderr
        self.assertIn("not compiled ahead (", output)
        self.assertIn("its timing child compiles it", output)
        record = read_records(self.results)[0]
        self.assertIn("InductorError: simulated compile failure", record["metrics"]["error"])
        self.assertNotIn("compile", record)  # an error record, shaped as without the flag

    def test_a_compile_out_of_device_memory_beside_others_is_tried_again_alone(self):
        log = os.path.join(self.out, "compiles.log")
        env = dict(os.environ,
                   BENCHMATRIX_PYTHON=os.path.join(HERE, "out_of_memory_compile_helper.sh"),
                   COMPILE_CPU_LOG=log)
        output = self.sweep("--dynamo=inductor", "--test=eval", "--test=train",
                            "--compile-ahead=2", "--no-compile-service", env=env).stderr
        self.assertEqual(output.count("ran out of device memory beside other compiles; it "
                                      "compiles again alone at the end"), 2, output)
        self.assertEqual(output.count("not compiled ahead ("), 2, output)  # alone too: reported
        with open(log) as f:
            cpus = [line.strip().removeprefix("cpus=") for line in f]
        # two together, then each alone on every CPU, then the two timing children (unpinned)
        everything = cpu_list(os.sched_getaffinity(0))
        self.assertEqual(len(cpus), 6, cpus)
        self.assertEqual(cpus[2:4], [everything, everything])
        if len(os.sched_getaffinity(0)) >= 2:
            self.assertNotIn(everything, cpus[:2])
        for record in read_records(self.results):
            self.assertIn("out of memory", record["metrics"]["error"])

    def test_a_negative_job_count_is_refused(self):
        result = self.sweep("--dynamo=inductor", "--compile-ahead=-1", check=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("argument --compile-ahead: expected the number of compile-only children at "
                      "once (0: off), got -1", result.stderr)
        self.assertFalse(os.path.exists(self.results))


if __name__ == "__main__":
    unittest.main()
