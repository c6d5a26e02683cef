"""The compile helper's precompiled headers built ahead (python/benchmatrix_compile/headers_ahead.py)
on the CPU: a real AOTInductor compile of a small model with empty caches (--fresh-caches, the
runner's --cold-start), the vector-ISA probes off (TORCHINDUCTOR_VEC_ISA_OK=0: the ISA known
without probes, as on CUDA, the default case, which CI cannot run) and BENCHMATRIX_HEADERS_AHEAD=1
(ahead on the CPU too). What a user would notice if the prediction of
Inductor's request went wrong: the headers built twice (the compile no faster) or a package that
does not run. So: every header Inductor asked for came from the thread built ahead, the wrapper
and kernel builds included them (their command lines in the cache say -include), and the package
computes what the module computes."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from small_aoti_model import PYTHON_DIR, package_output, torch, write_small_model


class HeadersBuiltAhead(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory(prefix="benchmatrix_headers_ahead_")
        root = cls.directory.name
        cls.module, cls.example = write_small_model(root)
        cls.cache_dir = os.path.join(root, "inductor_cache")
        cls.package = os.path.join(root, "model.pt2")
        timings_path = os.path.join(root, "timings.json")
        environment = dict(os.environ, TORCHINDUCTOR_VEC_ISA_OK="0", BENCHMATRIX_HEADERS_AHEAD="1",
                           TORCHINDUCTOR_CACHE_DIR=cls.cache_dir,
                           PYTHONPATH=os.pathsep.join(
                               [PYTHON_DIR, os.environ.get("PYTHONPATH", "")]))
        cls.environment = environment
        cls.arguments = [sys.executable, "-m", "benchmatrix_compile", "--torchscript",
                         os.path.join(root, "model.pt"), "--inputs",
                         os.path.join(root, "inputs.pt"), "--device", "cpu", "--out",
                         cls.package, "--fresh-caches", "--timings-json", timings_path]
        cls.helper = subprocess.run(cls.arguments, env=environment, capture_output=True,
                                    text=True, timeout=600)
        cls.timings = None
        if cls.helper.returncode == 0:
            with open(timings_path) as f:
                cls.timings = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    def setUp(self):
        self.assertEqual(self.helper.returncode, 0, self.helper.stderr[-4000:])

    def test_a_setting_other_than_0_or_1_is_refused_with_what_was_expected(self):
        refused = subprocess.run(self.arguments[:-2],
                                 env=dict(self.environment, BENCHMATRIX_HEADERS_AHEAD="yes"),
                                 capture_output=True, text=True, timeout=300)
        self.assertEqual(refused.returncode, 2)
        self.assertIn("BENCHMATRIX_HEADERS_AHEAD='yes': expected 0", refused.stderr)

    def test_every_header_inductor_asked_for_came_from_the_thread(self):
        ahead = self.timings["headers_ahead"]
        self.assertTrue(ahead["used"], ahead)
        self.assertNotIn("not_predicted", ahead)
        self.assertNotIn("error", ahead)
        # The compile waited at most as long as the thread built (the rest ran beside it), and the
        # breakdown counts the wait where the headers' build would have been.
        self.assertLessEqual(ahead["waited_s"], ahead["built_s"] + 0.05)
        self.assertAlmostEqual(self.timings["breakdown_s"]["cpp_other_s"], ahead["waited_s"],
                               delta=0.01)
        self.assertIn("(ahead)", self.helper.stdout)  # the compile log names the thread's builds

    def test_wrapper_and_kernel_builds_include_the_precompiled_headers(self):
        header_dir = os.path.join(self.cache_dir, "precompiled_headers")
        headers = sorted(name for name in os.listdir(header_dir) if name.endswith(".h.gch"))
        self.assertEqual(len(headers), 2, headers)  # the CPU's wrapper and kernel headers
        commands = []
        for folder, _, files in os.walk(self.cache_dir):
            for name in files:
                if name.endswith((".wrapper.cpp", ".kernel.cpp")):
                    with open(os.path.join(folder, name)) as f:
                        source = f.read()
                    commands.append(source.split("// Compile cmd\n// ", 1)[1].splitlines()[0])
        self.assertEqual(len(commands), 2)
        for command in commands:
            self.assertTrue(any(f"-include {os.path.join(header_dir, h[:-4])} " in command
                                for h in headers), command)

    def test_the_package_computes_what_the_module_computes(self):
        with torch.no_grad():
            expected = self.module(self.example)[0]
        torch.testing.assert_close(package_output(self.package, self.example), expected)


if __name__ == "__main__":
    unittest.main()
