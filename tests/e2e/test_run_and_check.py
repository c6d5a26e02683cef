"""run_and_check end to end on the CPU: C++ modules compiled at run time (one fixture file holds the
reference and the candidates, so the whole class costs one compile plus a failing one and a
--clear_cache rebuild) and KernelBench Python modules through the Python child."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

RUN_AND_CHECK = os.environ.get("RUN_AND_CHECK", "../../build/run_and_check")
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernel_check")
CPU_MODULES = os.path.join(FIXTURES, "cpu_modules.cpp")
EXIT_CORRECT, EXIT_INCORRECT, EXIT_USAGE, EXIT_COMPILE, EXIT_ERROR = 0, 1, 2, 3, 4


def run_and_check(*args, prefix, timeout=300):
    """Runs the tool with --json; returns (exit status, stdout, the JSON result or None)."""
    fd, json_path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    os.unlink(json_path)
    try:
        proc = subprocess.run([RUN_AND_CHECK, "--device", "cpu", "--build_dir_prefix", prefix,
                               "--json", json_path, *args],
                              capture_output=True, text=True, timeout=timeout)
        result = None
        if os.path.exists(json_path):
            with open(json_path, encoding="utf-8") as f:
                result = json.load(f)
        return proc.returncode, proc.stdout + proc.stderr, result
    finally:
        if os.path.exists(json_path):
            os.unlink(json_path)


class CppModules(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.prefix = tempfile.mkdtemp(prefix="run-and-check-cpp-")
        # The first run compiles cpu_modules.cpp once (reference and candidates share the file).
        cls.first = run_and_check("--ref_src", CPU_MODULES, "--custom_src", CPU_MODULES,
                                  "--num_correct_trials", "3", prefix=cls.prefix)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.prefix, ignore_errors=True)

    def check(self, *args, **kwargs):
        return run_and_check("--ref_src", CPU_MODULES, "--custom_src", CPU_MODULES, *args,
                             prefix=self.prefix, **kwargs)

    def test_a_correct_module_passes(self):
        code, out, result = self.first
        self.assertEqual(code, EXIT_CORRECT, out)
        self.assertEqual(result["status"], "correct")
        self.assertTrue(result["compiled"])
        self.assertTrue(result["correct"])
        self.assertEqual(result["correctness_trials"], {"passed": 3, "total": 3})
        self.assertEqual(len({t["seed"] for t in result["trials"]}), 3)  # per-trial seeds
        self.assertEqual(result["max_abs_diff"], 0.0)
        self.assertFalse(result["compile"]["ref"]["cache_hit"])
        self.assertGreater(result["compile"]["ref"]["compile_seconds"], 0)
        self.assertEqual(result["compile"]["ref"]["cache_key"], result["compile"]["custom"]["cache_key"])
        self.assertIsNone(result["performance"])
        self.assertIn("result:      correct (exit 0)", out)

    def test_a_rerun_hits_the_cache(self):
        code, out, result = self.check()
        self.assertEqual(code, EXIT_CORRECT, out)
        for side in ("ref", "custom"):
            self.assertTrue(result["compile"][side]["cache_hit"], side)
            self.assertEqual(result["compile"][side]["compile_seconds"], 0.0)
        self.assertEqual(result["compile"]["ref"]["cache_key"], self.first[2]["compile"]["ref"]["cache_key"])
        self.assertIn("cache hit", out)

    def test_a_wrong_module_fails_with_its_max_difference(self):
        code, out, result = self.check("--custom_entry_point", "ModelWrong", "--verbose")
        self.assertEqual(code, EXIT_INCORRECT, out)
        self.assertEqual(result["status"], "incorrect")
        self.assertFalse(result["correct"])
        self.assertAlmostEqual(result["max_abs_diff"], 0.5, places=6)
        self.assertAlmostEqual(result["mean_abs_diff"], 0.5, places=6)
        leaf = result["trials"][0]["outputs"][0]
        self.assertEqual((leaf["shape"], leaf["dtype"], leaf["mismatches"], leaf["elements"]),
                         ("[4, 16]", "float32", 64, 64))
        self.assertIn("max diff 0.5", out)

    def test_a_crashing_module_is_a_result(self):
        code, out, result = self.check("--custom_entry_point", "ModelAbort")
        self.assertEqual(code, EXIT_ERROR, out)
        self.assertEqual(result["status"], "crash")
        self.assertIn("SIGABRT", result["error"])
        self.assertEqual(result["crash_phase"], "trial 0: custom forward")

    def test_an_unknown_entry_point_does_not_load(self):
        code, out, result = self.check("--custom_entry_point", "Missing")
        self.assertEqual(code, EXIT_COMPILE, out)
        self.assertIn("no module 'Missing'", result["compile_error"])
        self.assertIn("ModelNew", result["compile_error"])

    def test_measure_performance_on_the_cpu(self):
        code, out, result = self.check("--measure_performance", "--num_perf_trials", "5")
        self.assertEqual(code, EXIT_CORRECT, out)
        perf = result["performance"]
        self.assertEqual(perf["timer"], "steady_clock")
        self.assertFalse(perf["l2_flush"])
        for side in ("reference", "custom"):
            self.assertEqual(len(perf[side]["times"]), 5)
            self.assertLessEqual(perf[side]["min"], perf[side]["mean"])
            self.assertLessEqual(perf[side]["mean"], perf[side]["max"])
        self.assertAlmostEqual(perf["speedup"], perf["reference"]["mean"] / perf["custom"]["mean"])
        self.assertIn("steady_clock wall time on the CPU", out)
        self.assertIn("speedup:", out)

    def test_z_clear_cache_rebuilds_the_entry(self):  # runs last: it costs a compile
        code, out, result = self.check("--clear_cache")
        self.assertEqual(code, EXIT_CORRECT, out)
        self.assertTrue(result["cache_cleared"])
        self.assertFalse(result["compile"]["ref"]["cache_hit"])  # the same file: the same entry
        self.assertTrue(result["compile"]["custom"]["cache_hit"])

    def test_a_module_that_does_not_compile_reports_the_compiler_error(self):
        source = os.path.join(FIXTURES, "cpp_does_not_compile.cpp")
        code, out, result = run_and_check("--ref_src", CPU_MODULES, "--custom_src", source,
                                          prefix=self.prefix)
        self.assertEqual(code, EXIT_COMPILE, out)
        self.assertEqual(result["status"], "compile_error")
        self.assertFalse(result["compiled"])
        self.assertIn("undeclared_kernel_symbol", result["compile_error"])
        self.assertIn("error:", result["compile_error"])
        self.assertFalse(result["compile"]["custom"]["compiled"])
        self.assertIn("undeclared_kernel_symbol", out)


class PythonModules(unittest.TestCase):
    def setUp(self):
        self.prefix = tempfile.mkdtemp(prefix="run-and-check-py-")

    def tearDown(self):
        shutil.rmtree(self.prefix, ignore_errors=True)

    def check(self, custom, *args, **kwargs):
        return run_and_check("--ref_src", os.path.join(FIXTURES, "py_ref.py"),
                             "--custom_src", os.path.join(FIXTURES, custom), *args,
                             prefix=self.prefix, **kwargs)

    def test_a_correct_module_passes_every_output(self):
        code, out, result = self.check("py_custom_ok.py", "--num_correct_trials", "2",
                                       "--measure_performance", "--num_perf_trials", "3")
        self.assertEqual(code, EXIT_CORRECT, out)
        self.assertEqual(result["language"], "python")
        self.assertEqual(result["correctness_trials"], {"passed": 2, "total": 2})
        self.assertEqual(len(result["trials"][0]["outputs"]), 2)  # the tuple's two tensors
        self.assertLess(result["max_abs_diff"], 1e-5)
        self.assertEqual(len(result["performance"]["custom"]["times"]), 3)
        self.assertGreater(result["performance"]["speedup"], 0)

    def test_a_wrong_second_output_fails_with_its_max_difference(self):
        code, out, result = self.check("py_custom_wrong.py")
        self.assertEqual(code, EXIT_INCORRECT, out)
        first, second = result["trials"][0]["outputs"]
        self.assertIsNone(first["issue"])
        self.assertIn("output mismatch", second["issue"])
        self.assertAlmostEqual(second["max_abs_diff"], 0.25, places=4)
        self.assertAlmostEqual(result["max_abs_diff"], 0.25, places=4)
        self.assertIn("output 1", result["trials"][0]["issue"])

    def test_a_syntax_error_is_a_compile_failure(self):
        code, out, result = self.check("py_custom_syntax.py")
        self.assertEqual(code, EXIT_COMPILE, out)
        self.assertEqual(result["status"], "compile_error")
        self.assertIn("SyntaxError", result["compile_error"])

    def test_a_crash_is_a_result(self):
        code, out, result = self.check("py_custom_abort.py")
        self.assertEqual(code, EXIT_ERROR, out)
        self.assertEqual(result["status"], "crash")
        self.assertIn("SIGABRT", result["error"])
        self.assertEqual(result["crash_phase"], "trial 0: custom forward")

    def test_a_hang_times_out(self):
        code, out, result = self.check("py_custom_hang.py", "--timeout", "4")
        self.assertEqual(code, EXIT_ERROR, out)
        self.assertEqual(result["status"], "timeout")
        self.assertIn("timed out", result["error"])


class Usage(unittest.TestCase):
    def usage(self, *args):
        proc = subprocess.run([RUN_AND_CHECK, *args], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, EXIT_USAGE, proc.stdout + proc.stderr)
        return proc.stderr

    def test_usage_errors_exit_2(self):
        self.assertIn("required", self.usage("--custom_src", CPU_MODULES))
        self.assertIn("no such file", self.usage("--ref_src", "/nonexistent.py", "--custom_src", CPU_MODULES))
        self.assertIn("must both be Python", self.usage("--ref_src", os.path.join(FIXTURES, "py_ref.py"),
                                                "--custom_src", CPU_MODULES, "--device", "cpu"))

    @unittest.skipIf(shutil.which("nvidia-smi") and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True).returncode == 0, "a GPU is visible")
    def test_cuda_without_a_gpu_is_a_clear_error(self):
        self.assertIn("pass --device cpu", self.usage("--ref_src", CPU_MODULES, "--custom_src", CPU_MODULES))


if __name__ == "__main__":
    unittest.main()
