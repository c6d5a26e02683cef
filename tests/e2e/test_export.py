"""experiment_runner --export/--export-dir (.npy + manifest.json per config) and numeric_check."""
import glob
import hashlib
import json
import os
import shutil
import unittest

import numpy

from harness import RUNNER, OutputDirTest, read_records, run

NUMERIC_CHECK = os.environ.get("NUMERIC_CHECK", "../../build/numeric_check")
MANIFEST_KEYS = ["model", "suite", "backend", "test", "batch_size", "accelerator",
                 "accelerator_model", "seed", "device", "torch_version", "cuda_version",
                 "cudnn_version", "tensors"]
TENSOR_KEYS = ["name", "file", "role", "dtype", "stored_dtype", "shape", "sha256"]


def save_exported(path, array):
    """Replaces an exported array as a different run would have written it: the data and its
    manifest entry's SHA-256 (else numeric_check reports the file as corrupted)."""
    numpy.save(path, array)
    manifest_path = os.path.join(os.path.dirname(path), "manifest.json")
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    for t in manifest["tensors"]:
        if t["file"] == os.path.basename(path):
            t["sha256"] = hashlib.sha256(array.tobytes()).hexdigest()
    with open(manifest_path, "w", encoding="utf-8") as f:
        json.dump(manifest, f)


class ExportTest(OutputDirTest):
    def export(self, *args):
        exported = os.path.join(self.out, "export")
        run(RUNNER, "--accelerator=cpu", "--xla=None", "--dynamo=None", "--repeat=2",
            f"--output-dirname={self.out}", "--export", "both", "--export-dir", exported, *args)
        return exported

    def check_manifest(self, config_dir):
        with open(os.path.join(config_dir, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        self.assertEqual(list(manifest), MANIFEST_KEYS + (["note"] if "note" in manifest else []))
        # the LibTorch and CUDA build this binary links (the pip torch it was built against)
        try:
            import torch
            self.assertEqual(manifest["torch_version"], torch.__version__.split("+")[0])
            self.assertEqual(manifest["cuda_version"], torch.version.cuda)
        except ImportError:
            pass
        if manifest["device"] == "cpu":
            self.assertIsNone(manifest["cudnn_version"])
        files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(config_dir, "*.npy")))
        self.assertEqual(sorted(t["file"] for t in manifest["tensors"]), files)
        for t in manifest["tensors"]:
            self.assertEqual(list(t), TENSOR_KEYS)
            array = numpy.load(os.path.join(config_dir, t["file"]))
            self.assertEqual(array.dtype.str, t["stored_dtype"])
            self.assertEqual(list(array.shape), t["shape"])
            self.assertEqual(hashlib.sha256(array.tobytes()).hexdigest(), t["sha256"])
        return manifest

    def test_dummy_eval_export_and_numeric_check(self):
        exported = self.export("--suite-name=dummy", "--test=eval")
        configs = os.listdir(exported)
        self.assertEqual(configs, ["cpu-None-False-False-eval-None-None-None-dummy-bs16"])
        config_dir = os.path.join(exported, configs[0])
        manifest = self.check_manifest(config_dir)
        self.assertEqual((manifest["model"], manifest["suite"], manifest["backend"], manifest["test"],
                          manifest["batch_size"], manifest["accelerator"], manifest["seed"],
                          manifest["device"]), ("dummy", "dummy", "eager", "eval", 16, "cpu", 1337, "cpu"))
        tensors = {t["name"]: t for t in manifest["tensors"]}
        self.assertEqual(sorted(tensors), ["input_0", "output_0"])
        for name in tensors:  # CPU inference runs in bfloat16, stored widened exactly
            self.assertEqual((tensors[name]["dtype"], tensors[name]["stored_dtype"]), ("bfloat16", "<f4"))
            self.assertEqual(tensors[name]["shape"], [16, 32])
            array = numpy.load(os.path.join(config_dir, name + ".npy"))
            self.assertTrue(numpy.all(array.view(numpy.uint32) & 0xFFFF == 0))
        self.assertEqual(tensors["input_0"]["role"], "input")
        self.assertEqual(tensors["output_0"]["role"], "output")
        # Softmax rows of the output sum to 1 (to bfloat16 precision)
        output = numpy.load(os.path.join(config_dir, "output_0.npy"))
        numpy.testing.assert_allclose(output.sum(axis=1), 1, atol=0.05)

        # against itself
        proc = run(NUMERIC_CHECK, "--a", exported, "--b", exported)
        self.assertIn("numerically match: 2 tensors in 1 configs", proc.stdout)
        self.assertNotIn("MISMATCH", proc.stdout)

        # one output element changed
        changed = os.path.join(self.out, "changed")
        shutil.copytree(exported, changed)
        path = os.path.join(changed, configs[0], "output_0.npy")
        array = numpy.load(path)
        original = float(array[3, 5])
        array[3, 5] = original * 1.5 + 0.25
        save_exported(path, array)
        proc = run(NUMERIC_CHECK, "--a", changed, "--b", exported, check=False)
        self.assertEqual(proc.returncode, 1, proc.stdout)
        line = next(l for l in proc.stdout.splitlines() if "output_0" in l)
        self.assertIn("MISMATCH 1 of 512 elements", line)
        self.assertIn("first at [3, 5]", line)
        self.assertIn(f"a={float(array[3, 5])!r} b={original!r}", line)
        self.assertIn("input_0: OK", proc.stdout)
        # --rtol alone, wide enough, passes it (atol keeps its default)
        rtol = abs(float(array[3, 5]) - original) / abs(original) * 1.01
        proc = run(NUMERIC_CHECK, "--a", changed, "--b", exported, f"--rtol={rtol}")
        self.assertIn("numerically match", proc.stdout)
        # --atol alone, likewise
        proc = run(NUMERIC_CHECK, "--a", changed, "--b", exported, "--atol=10")
        self.assertIn("numerically match", proc.stdout)

        # NaN at the same position is equal; NaN against a number is not
        array[0, 0] = numpy.nan
        save_exported(path, array)
        proc = run(NUMERIC_CHECK, "--a", changed, "--b", exported, "--atol=10", check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("first at [0, 0]: a=NaN", proc.stdout)
        both_nan = os.path.join(self.out, "both_nan")
        shutil.copytree(changed, both_nan)
        proc = run(NUMERIC_CHECK, "--a", changed, "--b", both_nan)
        self.assertIn("numerically match", proc.stdout)

        # a file on one side only
        os.remove(os.path.join(changed, configs[0], "input_0.npy"))
        proc = run(NUMERIC_CHECK, "--a", changed, "--b", both_nan, check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(f"{configs[0]}/input_0: ONLY IN B", proc.stdout)

        # bad input
        proc = run(NUMERIC_CHECK, "--a", os.path.join(self.out, "missing"), "--b", exported, check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no such directory", proc.stderr)
        proc = run(NUMERIC_CHECK, "--a", exported, "--b", exported, "--tolerance=1", check=False)
        self.assertEqual(proc.returncode, 2)
        proc = run(NUMERIC_CHECK, "--a", exported, check=False)
        self.assertEqual(proc.returncode, 2)

    def test_dummy_input_matches_python_torch(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no Python torch")
        exported = self.export("--suite-name=dummy", "--test=eval")
        config_dir = os.path.join(exported, os.listdir(exported)[0])
        # the dummy model: seed 1337, the three Linear layers' parameters, then rand(16, 32)
        torch.manual_seed(1337)
        torch.nn.Sequential(torch.nn.Linear(32, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                            torch.nn.ReLU(), torch.nn.Linear(512, 32))
        expected = torch.rand(16, 32).to(torch.bfloat16).float().numpy()
        numpy.testing.assert_array_equal(numpy.load(os.path.join(config_dir, "input_0.npy")), expected)

    def test_torchbench_dcgan_train_float32(self):
        exported = self.export("--suite-name=torchbench", "--filter=^dcgan$", "--batch-size=1",
                               "--test=train", "--collect-full-output")
        configs = os.listdir(exported)
        self.assertEqual(len(configs), 1)
        manifest = self.check_manifest(os.path.join(exported, configs[0]))
        dtypes = {t["dtype"] for t in manifest["tensors"]}
        self.assertNotIn("bfloat16", dtypes)
        self.assertIn("float32", dtypes)
        self.assertTrue(any(t["role"] == "output" for t in manifest["tensors"]))
        proc = run(NUMERIC_CHECK, "--a", exported, "--b", exported)
        self.assertIn("numerically match", proc.stdout)

    def test_train_without_full_output_has_a_note_and_nothing_to_compare(self):
        exported = self.export("--suite-name=dummy", "--test=train", "--export=output")
        [config] = os.listdir(exported)
        manifest = self.check_manifest(os.path.join(exported, config))
        self.assertEqual(manifest["tensors"], [])
        self.assertIn("--collect-full-output", manifest["note"])
        proc = run(NUMERIC_CHECK, "--a", exported, "--b", exported, check=False)
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertIn(f"{config}: NOTHING TO COMPARE", proc.stdout)
        self.assertIn("--collect-full-output", proc.stdout)
        self.assertIn("Nothing was compared", proc.stdout)
        self.assertNotIn("numerically match", proc.stdout)

    def test_export_needs_export_dir_and_the_reverse(self):
        for args in (["--export=both"], [f"--export-dir={self.out}"]):
            proc = run(RUNNER, "--suite-name=dummy", "--dry-run", *args, check=False)
            self.assertEqual(proc.returncode, 2)
            self.assertIn("--export and --export-dir must be given together", proc.stderr)
        proc = run(RUNNER, "--suite-name=dummy", "--dry-run", "--export=in",
                   f"--export-dir={self.out}", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("argument --export: invalid choice: 'in'", proc.stderr)
        # inputs are redrawn for every step under --randomize-input: only outputs can be exported
        proc = run(RUNNER, "--suite-name=dummy", "--dry-run", "--randomize-input", "--export=both",
                   f"--export-dir={self.out}", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("cannot be combined with --randomize-input", proc.stderr)
        run(RUNNER, "--suite-name=dummy", "--dry-run", "--randomize-input", "--export=output",
            f"--export-dir={self.out}")

    def test_export_failure_is_an_error_record(self):
        blocker = os.path.join(self.out, "not_a_directory")
        open(blocker, "w").close()
        run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--xla=None", "--dynamo=None",
            "--test=eval", "--repeat=1", f"--output-dirname={self.out}", "--export=both",
            f"--export-dir={blocker}", check=False)
        [record] = read_records(self.results)
        self.assertIn("--export: cannot create the export directory", record["metrics"]["error"])


def write_config(directory, tensors, note=None, manifest=True):
    """A config directory as experiment_runner --export writes one: float32 arrays and a manifest."""
    os.makedirs(directory, exist_ok=True)
    entries = []
    for name, values in tensors.items():
        array = numpy.asarray(values, dtype=numpy.float32)
        numpy.save(os.path.join(directory, name + ".npy"), array)
        entries.append({"name": name, "file": name + ".npy", "role": name.split("_")[0],
                        "dtype": "float32", "stored_dtype": "<f4", "shape": list(array.shape),
                        "sha256": hashlib.sha256(array.tobytes()).hexdigest()})
    if manifest:
        document = {"model": "m", "tensors": entries}
        if note:
            document["note"] = note
        with open(os.path.join(directory, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump(document, f)


class NumericCheckInputTest(OutputDirTest):
    """numeric_check on crafted export directories: nothing compared is never a match, a config
    directory is accepted as such, one-sided manifests and corrupted files are reported."""

    def path(self, *parts):
        return os.path.join(self.out, *parts)

    def check(self, a, b, status):
        proc = run(NUMERIC_CHECK, "--a", self.path(a), "--b", self.path(b), check=False)
        self.assertEqual(proc.returncode, status, proc.stdout + proc.stderr)
        return proc

    def test_two_empty_directories_compare_nothing(self):
        os.makedirs(self.path("e1"))
        os.makedirs(self.path("e2"))
        proc = self.check("e1", "e2", 1)
        self.assertIn("Nothing was compared: no tensor in A and B (0 configs found)", proc.stdout)
        self.assertNotIn("numerically match", proc.stdout)

    def test_a_config_without_tensors_is_not_a_match(self):
        for side in ("a", "b"):
            write_config(self.path(side, "c1"), {"input_0": [1.0, 2.0]})
            write_config(self.path(side, "c2"), {})
        proc = self.check("a", "b", 0)
        self.assertIn("c2: NOTHING TO COMPARE (no tensors on either side)", proc.stdout)
        self.assertIn("numerically match: 1 tensors in 1 configs; 1 config(s) with nothing to compare",
                      proc.stdout)
        shutil.rmtree(self.path("a", "c1"))
        shutil.rmtree(self.path("b", "c1"))
        proc = self.check("a", "b", 1)
        self.assertIn("Nothing was compared", proc.stdout)

    def test_config_directories_are_compared_directly(self):
        write_config(self.path("a"), {"input_0": [1.0, 2.0], "output_0": [3.0]})
        write_config(self.path("b"), {"input_0": [1.0, 2.0], "output_0": [3.5]})
        proc = self.check("a", "b", 1)
        self.assertIn("input_0: OK", proc.stdout)
        self.assertIn("output_0: MISMATCH 1 of 1 elements", proc.stdout)
        proc = self.check("a", "a", 0)
        self.assertIn("numerically match: 2 tensors in 1 configs", proc.stdout)
        # .npy files without a manifest make a config directory too
        os.makedirs(self.path("bare1"))
        numpy.save(self.path("bare1", "x.npy"), numpy.ones(3, numpy.float32))
        shutil.copytree(self.path("bare1"), self.path("bare2"))
        proc = self.check("bare1", "bare2", 0)
        self.assertIn("x: OK", proc.stdout)
        # one config directory against a directory of configs: bad input
        write_config(self.path("root", "c1"), {"input_0": [1.0, 2.0]})
        proc = self.check("a", "root", 2)
        self.assertIn("is one config's directory", proc.stderr)

    def test_manifest_on_one_side_only(self):
        write_config(self.path("a", "c"), {"input_0": [1.0]})
        write_config(self.path("b", "c"), {"input_0": [1.0]}, manifest=False)
        proc = self.check("a", "b", 1)
        self.assertIn("c/manifest.json: ONLY IN A", proc.stdout)
        self.assertIn("c/input_0: OK", proc.stdout)

    def test_corrupted_file_is_reported(self):
        write_config(self.path("a", "c"), {"input_0": [1.0, 2.0], "output_0": [5.0]})
        shutil.copytree(self.path("a"), self.path("b"))
        path = self.path("b", "c", "output_0.npy")
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:  # one bit of the data: still a valid .npy, not what was exported
            f.write(data[:-1] + bytes([data[-1] ^ 0x01]))
        proc = self.check("a", "b", 1)
        self.assertIn("c/output_0: CORRUPTED in B: the data's SHA-256", proc.stdout)
        self.assertIn("c/input_0: OK", proc.stdout)
        # truncated: unreadable, reported, the other tensors still compared
        with open(path, "wb") as f:
            f.write(data[:100])
        proc = self.check("a", "b", 1)
        self.assertIn("c/output_0: UNREADABLE in B", proc.stdout)
        self.assertIn("c/input_0: OK", proc.stdout)
        # a file the manifest does not list cannot be checked
        numpy.save(self.path("a", "c", "extra.npy"), numpy.zeros(1, numpy.float32))
        shutil.copy(self.path("a", "c", "extra.npy"), self.path("b", "c", "extra.npy"))
        proc = self.check("a", "b", 1)
        self.assertIn("c/extra: NOT IN A's manifest.json", proc.stdout)

    def test_relative_error_is_infinite_where_b_is_zero(self):
        write_config(self.path("a"), {"output_0": [1e-6, 2.0]})
        write_config(self.path("b"), {"output_0": [0.0, 2.0]})
        proc = self.check("a", "b", 0)  # within atol 1e-5
        self.assertIn("max rel error Infinity", proc.stdout)


if __name__ == "__main__":
    unittest.main()
