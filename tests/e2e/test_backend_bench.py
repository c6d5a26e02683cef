"""backend_bench end to end on the CPU: the smoke suite and a slice of the OpInfo suite with aten,
a directory of per-op C++ kernels compiled at run time (one correct, one wrong, one disguised
fallback, one that segfaults or hangs: four compiles, then cache hits, then one rebuild after a
source change), a TORCH_LIBRARY_IMPL kernel library built by CMake, and usage errors."""
import csv
import glob
import json
import os
import shutil
import subprocess
import tempfile
import unittest

BACKEND_BENCH = os.environ.get("BACKEND_BENCH", "../../build/backend_bench")
LIBRARY = os.environ.get("BACKEND_BENCH_TEST_LIBRARY", "")
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "backend_bench")
EXIT_PASSED, EXIT_FAILED, EXIT_USAGE, EXIT_LIBRARY, EXIT_ERROR = 0, 1, 2, 3, 4
# The OpInfo export (about 30 s) is cached per user, as a user's would be.
USER_CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                          "benchmatrix", "backend_bench")


def bench(*args, timeout=600, env=None):
    """Runs backend_bench --device cpu; returns (exit status, output)."""
    proc = subprocess.run([BACKEND_BENCH, "--device", "cpu", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)
    return proc.returncode, proc.stdout + proc.stderr


def records(log_dir):
    with open(os.path.join(log_dir, "results.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def statuses(log_dir):
    """op -> the set of its tests' statuses."""
    by_op = {}
    for r in records(log_dir):
        by_op.setdefault(r["op"], set()).add(r["status"])
    return by_op


class WithLogDir(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="backend-bench-e2e-")
        self.log_dir = os.path.join(self._tmp.name, "out")

    def tearDown(self):
        self._tmp.cleanup()


class AtenSuites(WithLogDir):
    def test_smoke_passes_everything(self):
        code, out = bench("--suite", "smoke", "--backend", "aten", "--log-dir", self.log_dir, "-j", "2")
        self.assertEqual(code, EXIT_PASSED, out)
        rows = records(self.log_dir)
        self.assertGreaterEqual(len({r["op"] for r in rows}), 10)
        self.assertTrue(all(r["status"] == "pass" for r in rows), out)
        self.assertTrue(all(r["dtype"] == "float32" for r in rows))
        self.assertIn("pass rate 1.0000", out)
        self.assertIn("geomean speedup n/a", out)  # not timed without --perf: n/a, never 1.0
        with open(os.path.join(self.log_dir, "OVERALL_SUMMARY.md"), encoding="utf-8") as f:
            summary = f.read()
        self.assertIn("| Pass rate | 1.0000 |", summary)
        self.assertIn("--suite smoke", summary)
        for op in ("relu.default", "add.Tensor", "mm.default"):
            folder = os.path.join(self.log_dir, "ops", op)
            for name in ("plan.json", "child.err", "progress.log", "results.jsonl"):
                self.assertTrue(os.path.exists(os.path.join(folder, name)), (op, name))
        with open(os.path.join(self.log_dir, "operator_summary.csv"), encoding="utf-8") as f:
            self.assertTrue(all(row["correct"] == "true" for row in csv.DictReader(f)))

    def test_perf_gives_speedups_and_perf_at_p(self):
        code, out = bench("--suite", "smoke", "--ops", "relu,add.Tensor", "--perf", "--repeats", "5",
                          "--warmup", "1", "--dtype", "float32,float64", "--log-dir", self.log_dir)
        self.assertEqual(code, EXIT_PASSED, out)
        rows = records(self.log_dir)
        self.assertEqual({r["dtype"] for r in rows}, {"float32", "float64"})
        self.assertEqual(len(rows), 12)  # 2 ops x 3 tests x 2 dtypes
        for r in rows:
            self.assertGreater(r["speedup"], 0)
            self.assertAlmostEqual(r["speedup"], r["reference_ms"] / r["candidate_ms"])
        self.assertRegex(out, r"geomean speedup [0-9.]+x over 2/2 ops, perf@1 ")
        self.assertIn("CPU wall clock", out)

    def test_opinfo_slice_passes_everything(self):
        ops = ("add,sub,mul,div,abs,neg,exp,log,sin,cos,tanh,sigmoid,relu,sum,mean,amax,mm,bmm,"
               "addmm,clamp,where,cat,_softmax,pow,maximum,minimum,eq,lt,argmax")
        code, out = bench("--suite", "opinfo", "--ops", ops, "--log-dir", self.log_dir, "-j", "2")
        self.assertEqual(code, EXIT_PASSED, out)
        rows = records(self.log_dir)
        self.assertGreaterEqual(len({r["op"] for r in rows}), 25)
        self.assertTrue(all(r["status"] == "pass" for r in rows), out)
        # The exported suite covers at least 60 aten overloads.
        suites = glob.glob(os.path.join(USER_CACHE, "opinfo", "*", "suite.json"))
        self.assertTrue(suites)
        with open(suites[0], encoding="utf-8") as f:
            suite = json.load(f)
        self.assertGreaterEqual(len(suite["ops"]), 60)
        self.assertTrue(all(1 <= len(tests) <= 3 for tests in suite["ops"].values()))

    def test_usage_errors(self):
        code, out = bench("--suite", "smoke", "--ops", "no_such_op", "--log-dir", self.log_dir)
        self.assertEqual(code, EXIT_USAGE, out)
        self.assertIn("no_such_op", out)
        code, out = bench("--backend", "directory", "--log-dir", self.log_dir)
        self.assertEqual(code, EXIT_USAGE, out)
        self.assertIn("--kernels-dir", out)
        code, out = bench("--backend", "library", "--library", "/nonexistent.so", "--log-dir", self.log_dir)
        self.assertEqual(code, EXIT_USAGE, out)
        code, out = bench("--rtol", "-1", "--log-dir", self.log_dir)
        self.assertEqual(code, EXIT_USAGE, out)

    def test_tolerance_flags_apply_alone(self):
        # --atol alone: the child gets it, and rtol stays the per-dtype default (null).
        code, out = bench("--suite", "smoke", "--ops", "relu", "--atol", "0.5", "--log-dir", self.log_dir)
        self.assertEqual(code, EXIT_PASSED, out)
        with open(os.path.join(self.log_dir, "ops", "relu.default", "plan.json"), encoding="utf-8") as f:
            plan = json.load(f)
        self.assertEqual(plan["atol"], 0.5)
        self.assertIsNone(plan["rtol"])


class DirectoryKernels(unittest.TestCase):
    """Ordered: the first run compiles the four kernels, later ones hit the cache."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="backend-bench-dir-")
        cls.kernels = os.path.join(cls.tmp, "kernels")
        shutil.copytree(os.path.join(FIXTURES, "cpu"), cls.kernels)
        cls.cache = os.path.join(cls.tmp, "cache")
        cls.first_log = os.path.join(cls.tmp, "first")
        cls.first = bench("--suite", "smoke", "--backend", "directory", "--kernels-dir", cls.kernels,
                          "--cache-dir", cls.cache, "--log-dir", cls.first_log, "-j", "2")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_dir(self, name, *args, env=None):
        log_dir = os.path.join(self.tmp, name)
        code, out = bench("--suite", "smoke", "--backend", "directory", "--kernels-dir", self.kernels,
                          "--cache-dir", self.cache, "--log-dir", log_dir, *args, env=env)
        return code, out, log_dir

    def test_1_pass_and_fail_per_op(self):
        code, out = self.first
        self.assertEqual(code, EXIT_FAILED, out)
        self.assertEqual(out.count(": compiled"), 4, out)
        self.assertEqual(statuses(self.first_log), {
            "relu.default": {"pass"},        # correct
            "add.Tensor": {"fail"},          # wrong (it subtracts)
            "sigmoid.default": {"fallback"},  # calls aten::sigmoid back
            "mul.Tensor": {"crash"},         # segfaults: only its op fails
        })
        crash = [r for r in records(self.first_log) if r["op"] == "mul.Tensor"][0]
        self.assertIn("SIGSEGV", crash["error"])
        self.assertIn("candidate", crash["error"])
        self.assertIn("pass rate 0.2500 (3/12)", out)
        self.assertIn("+9 not implemented by the backend", out)
        self.assertTrue(os.path.exists(os.path.join(self.first_log, "ops", "relu.default", "compile.log")))

    def test_2_cache_hit_then_hang_costs_only_its_op(self):
        env = dict(os.environ, BACKEND_BENCH_TEST_HANG="1")
        code, out, log_dir = self.run_dir("hang", "--ops", "mul,relu", "--timeout", "5", env=env)
        self.assertEqual(code, EXIT_FAILED, out)
        self.assertNotIn(": compiled", out)
        self.assertEqual(out.count(": cache hit"), 2, out)
        self.assertEqual(statuses(log_dir), {"relu.default": {"pass"}, "mul.Tensor": {"timeout"}})

    def test_3_source_change_rebuilds(self):
        with open(os.path.join(self.kernels, "relu", "relu.cpp"), "a", encoding="utf-8") as f:
            f.write("\n// changed\n")
        code, out, log_dir = self.run_dir("changed", "--ops", "relu,add")
        self.assertEqual(code, EXIT_FAILED, out)
        self.assertIn("building relu (relu.default) from", out)
        self.assertRegex(out, r"relu\.cpp: compiled")
        self.assertRegex(out, r"add__Tensor_implementation_v1\.cpp: cache hit")
        self.assertEqual(statuses(log_dir), {"relu.default": {"pass"}, "add.Tensor": {"fail"}})

    def test_4_empty_selection_is_na(self):
        empty = os.path.join(self.tmp, "empty_kernels")
        os.makedirs(empty, exist_ok=True)
        log_dir = os.path.join(self.tmp, "empty")
        code, out = bench("--backend", "directory", "--kernels-dir", empty, "--cache-dir", self.cache,
                          "--log-dir", log_dir)
        self.assertEqual(code, EXIT_FAILED, out)
        self.assertIn("pass rate n/a", out)
        self.assertIn("geomean speedup n/a", out)


@unittest.skipUnless(LIBRARY, "BACKEND_BENCH_TEST_LIBRARY (built by CMake) is not set")
class KernelLibrary(WithLogDir):
    def test_overridden_ops_are_tested(self):
        code, out = bench("--suite", "smoke", "--backend", "library", "--library", LIBRARY,
                          "--log-dir", self.log_dir)
        self.assertEqual(code, EXIT_FAILED, out)
        self.assertEqual(statuses(self.log_dir), {"relu.default": {"pass"}, "add.Tensor": {"fail"}})
        self.assertIn("+11 not implemented by the backend", out)

    def test_a_file_that_is_no_library_does_not_load(self):
        bogus = os.path.join(self._tmp.name, "bogus.so")
        with open(bogus, "w", encoding="utf-8") as f:
            f.write("not an ELF file\n")
        code, out = bench("--backend", "library", "--library", bogus, "--log-dir", self.log_dir)
        self.assertEqual(code, EXIT_LIBRARY, out)
        self.assertIn("bogus.so", out)
        self.assertIn("dlopen failed", out)


if __name__ == "__main__":
    unittest.main()
