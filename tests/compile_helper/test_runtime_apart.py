"""AOTInductor's runtime built apart from each wrapper (python/benchmatrix_compile/runtime_apart.py)
on the CPU: real AOTInductor compiles of a small model, the vector-ISA probes off
(TORCHINDUCTOR_VEC_ISA_OK=0, as the helper runs CUDA compiles). What a user would notice if the
split went wrong: a package that does not load or computes something else, a runtime built again
in every compile (no faster), a damaged cache entry breaking every later compile, or a torch whose
wrapper the split does not know failing to compile. So: a first compile builds the runtime object
into the Inductor cache directory, a second compile (its other caches empty) takes it from there,
both packages compute what the module computes, a damaged object is dropped and that compile's
wrapper built whole, the setting's 0 builds the wrapper whole, a bad setting is refused, and a
wrapper without AOTInductor's interface text is handed to Inductor's own build."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from small_aoti_model import PYTHON_DIR, package_output, torch, write_small_model

sys.path.insert(0, PYTHON_DIR)
from benchmatrix_compile.runtime_apart import RuntimeApart  # noqa: E402

RUNTIME_FOLDER = "benchmatrix_aoti_runtime"


class RuntimeBuiltApart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory(prefix="benchmatrix_runtime_apart_")
        cls.root = root = cls.directory.name
        cls.module, cls.example = write_small_model(root)
        cls.environment = dict(os.environ, TORCHINDUCTOR_VEC_ISA_OK="0",
                               PYTHONPATH=os.pathsep.join(
                                   [PYTHON_DIR, os.environ.get("PYTHONPATH", "")]))
        cls.environment.pop("BENCHMATRIX_RUNTIME_APART", None)
        # First compile: every cache empty. Second: a new Inductor cache directory holding only the
        # first one's runtime objects (as a sweep's shared compiler caches keep them).
        cls.first = cls.compile("first")
        os.makedirs(os.path.join(root, "second", "inductor_cache"))
        shutil.copytree(os.path.join(root, "first", "inductor_cache", RUNTIME_FOLDER),
                        os.path.join(root, "second", "inductor_cache", RUNTIME_FOLDER))
        cls.second = cls.compile("second")

    @classmethod
    def compile(cls, name, setting=None):
        """(completed helper process, its timings or None, its package path)."""
        folder = os.path.join(cls.root, name)
        os.makedirs(folder, exist_ok=True)
        package, timings_path = os.path.join(folder, "model.pt2"), os.path.join(folder, "t.json")
        environment = dict(cls.environment,
                           TORCHINDUCTOR_CACHE_DIR=os.path.join(folder, "inductor_cache"))
        if setting is not None:
            environment["BENCHMATRIX_RUNTIME_APART"] = setting
        helper = subprocess.run(
            [sys.executable, "-m", "benchmatrix_compile", "--torchscript",
             os.path.join(cls.root, "model.pt"), "--inputs", os.path.join(cls.root, "inputs.pt"),
             "--device", "cpu", "--out", package, "--timings-json", timings_path],
            env=environment, capture_output=True, text=True, timeout=600)
        timings = None
        if helper.returncode == 0:
            with open(timings_path) as f:
                timings = json.load(f)
        return helper, timings, package

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    def assert_compiled(self, compiled):
        helper, timings, _ = compiled
        self.assertEqual(helper.returncode, 0, helper.stderr[-4000:])
        return timings

    def test_the_first_compile_builds_the_runtime_into_the_inductor_cache(self):
        wrappers = self.assert_compiled(self.first)["runtime_apart"]["wrappers"]
        self.assertEqual(len(wrappers), 1, wrappers)
        self.assertTrue(wrappers[0]["split"], wrappers)
        self.assertFalse(wrappers[0]["runtime_cached"])
        self.assertGreater(wrappers[0]["runtime_s"], 0)
        objects = os.listdir(os.path.join(self.root, "first", "inductor_cache", RUNTIME_FOLDER))
        self.assertEqual([name for name in objects if name.endswith(".o")], objects)
        self.assertEqual(len(objects), 1, objects)  # no staging files left behind

    def test_a_later_compile_takes_the_runtime_from_the_cache(self):
        wrappers = self.assert_compiled(self.second)["runtime_apart"]["wrappers"]
        self.assertEqual(len(wrappers), 1, wrappers)
        self.assertTrue(wrappers[0]["split"], wrappers)
        self.assertTrue(wrappers[0]["runtime_cached"], wrappers)
        self.assertEqual(wrappers[0]["runtime_s"], 0.0)

    def test_both_packages_compute_what_the_module_computes(self):
        with torch.no_grad():
            expected = self.module(self.example)[0]
        for compiled in (self.first, self.second):
            self.assert_compiled(compiled)
            torch.testing.assert_close(package_output(compiled[2], self.example), expected)

    def test_a_damaged_runtime_object_is_dropped_and_the_wrapper_built_whole(self):
        runtime_folder = os.path.join(self.root, "damaged", "inductor_cache", RUNTIME_FOLDER)
        shutil.copytree(os.path.join(self.root, "first", "inductor_cache", RUNTIME_FOLDER),
                        runtime_folder)
        (name,) = os.listdir(runtime_folder)
        with open(os.path.join(runtime_folder, name), "wb") as f:
            f.write(b"not an object file")  # as a full disk or a killed copy could leave it
        helper, timings, package = self.compile("damaged")
        self.assertEqual(helper.returncode, 0, helper.stderr[-4000:])
        (wrapper,) = timings["runtime_apart"]["wrappers"]
        self.assertFalse(wrapper["split"], wrapper)
        self.assertIn("the split build failed", wrapper["reason"])
        self.assertEqual(os.listdir(runtime_folder), [])  # the next compile builds it afresh
        with torch.no_grad():
            expected = self.module(self.example)[0]
        torch.testing.assert_close(package_output(package, self.example), expected)

    def test_setting_0_builds_the_wrapper_whole(self):
        timings = self.assert_compiled(self.compile("off", setting="0"))
        self.assertNotIn("runtime_apart", timings)
        self.assertFalse(os.path.exists(os.path.join(self.root, "off", "inductor_cache",
                                                     RUNTIME_FOLDER)))

    def test_a_setting_other_than_0_or_1_is_refused_with_what_was_expected(self):
        helper, _, _ = self.compile("refused", setting="yes")
        self.assertEqual(helper.returncode, 2)
        self.assertIn("BENCHMATRIX_RUNTIME_APART='yes': expected 0", helper.stderr)

    def test_a_wrapper_without_the_interface_text_is_built_by_inductor(self):
        source = os.path.join(self.root, "other.wrapper.cpp")
        with open(source, "w") as f:
            f.write("int other_torch_wrapper() { return 0; }\n")

        class Builder:  # what RuntimeApart reads of Inductor's CppBuilder
            _name = "other.wrapper"
            _target_file = os.path.join(self.root, "other.wrapper.o")

            def get_command_line(self):
                return f"g++ {source} -c -o {self._target_file}"

        built = []
        apart = RuntimeApart(os.path.join(self.root, "unused_cache"))
        apart.build_wrapper(Builder(), built.append)
        self.assertEqual(len(built), 1)  # Inductor's own build ran, once
        self.assertEqual(apart.report()["wrappers"],
                         [{"split": False, "reason": "the wrapper has no interface.cpp text"}])


if __name__ == "__main__":
    unittest.main()
