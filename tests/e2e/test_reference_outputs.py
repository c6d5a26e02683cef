"""reference_outputs: a small sweep (ic 8 and 16, bfloat16 and float32) generated on the CPU. Every
.npy loads with numpy.load as it is, with the dtype and shape of its metadata; the inputs equal what
Python torch draws for the same seed and order; the conv2d and matmul outputs equal
torch.nn.functional.conv2d / torch.matmul computed in Python from the loaded inputs; the metadata
hashes are hashlib.sha256 of the arrays' bytes. verify passes, and fails naming the case when a byte
of an input file is flipped; compare of a directory with itself is 0 ULP, and reports max ULP 1 for a
copy with one output element one bfloat16/float32 step away; summary lists the cases; bad input
exits 2 with a message; generate has no default directory (it says the size the sweep asked for
would take) and logs that size before writing."""
import hashlib
import json
import os
import re
import shutil
import tempfile
import unittest

import numpy as np
import torch

from harness import run

REFERENCE_OUTPUTS = os.environ.get("REFERENCE_OUTPUTS", "../../build/reference_outputs")

SWEEP = [8, 16]
DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32}
INPUTS = [("conv2d", "input"), ("conv2d", "weight"), ("conv2d", "bias"), ("matmul", "A"), ("matmul", "B")]
TENSORS = INPUTS + [("conv2d", "output"), ("matmul", "output")]


def prefix(ic):
    return f"k{ic * 9:04d}_ic{ic:03d}"


def path(root, dtype, ic, op, name):
    return os.path.join(root, dtype, f"{prefix(ic)}_{op}_{name}.npy")


class ReferenceOutputsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="benchmatrix-reference-")
        cls.dir = os.path.join(cls._tmp.name, "ref")
        proc = run(REFERENCE_OUTPUTS, "generate", "--device", "cpu", "--out", cls.dir,
                   "--ic", *map(str, SWEEP))
        cls.generate_log = proc.stderr

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def copy(self, name):
        target = os.path.join(self._tmp.name, name)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(self.dir, target)
        return target

    def metadata(self, dtype, ic):
        with open(os.path.join(self.dir, dtype, f"{prefix(ic)}_metadata.json"), encoding="utf-8") as f:
            return json.load(f)

    def test_layout_config_and_progress(self):
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ["README.md", "bfloat16", "config.json", "float32", "system_info.json"])
        for dtype in DTYPES:
            self.assertEqual(len(os.listdir(os.path.join(self.dir, dtype))), 8 * len(SWEEP))
        with open(os.path.join(self.dir, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        self.assertEqual(config["seed"], 42)
        self.assertEqual(config["input_channels_sweep"], SWEEP)
        self.assertEqual(config["k_values"], [72, 144])
        self.assertEqual((config["input_height"], config["input_width"], config["out_channels"]), (32, 32, 32))
        with open(os.path.join(self.dir, "system_info.json"), encoding="utf-8") as f:
            info = json.load(f)
        self.assertEqual(info["device"], "cpu")
        self.assertEqual(info["input_generator"], "cpu")
        # TF32 off by default, as the seed sets it; no cuDNN on the CPU
        self.assertEqual((info["cudnn_allow_tf32"], info["cuda_matmul_allow_tf32"],
                          info["float32_matmul_precision"]), (False, False, "highest"))
        self.assertNotIn("cudnn_version", info)
        self.assertIn("[4/4] float32 ic=16 K=144", self.generate_log)

    def test_size_is_said_before_writing_and_is_what_was_written(self):
        first = self.generate_log.splitlines()[0]
        self.assertIn(f"writing 4 cases, about 3.0 MiB of .npy files into {self.dir}", first)
        data_bytes = sum(np.load(os.path.join(self.dir, dtype, name)).nbytes
                         for dtype in DTYPES for name in os.listdir(os.path.join(self.dir, dtype))
                         if name.endswith(".npy"))
        self.assertEqual(data_bytes, 3125760)

    def test_generate_without_out_exits_2_saying_how_big_and_writes_nothing(self):
        # The original wrote the whole sweep (3.1 GiB) into ./torch_reference_outputs by default.
        with tempfile.TemporaryDirectory(prefix="benchmatrix-cwd-") as cwd:
            for args, size in (([], "30 cases, about 3.1 GiB of .npy files"),
                               (["--ic", "8"], "2 cases, about 1.2 MiB of .npy files")):
                proc = run(os.path.abspath(REFERENCE_OUTPUTS), "generate", *args, check=False, cwd=cwd)
                self.assertEqual(proc.returncode, 2, (args, proc.stdout, proc.stderr))
                self.assertIn("argument --out: required: the directory generate writes the data set "
                              f"into ({size}; --ic narrows the sweep); nothing was written", proc.stderr)
                self.assertEqual(os.listdir(cwd), [])
        self.assertIn("the whole sweep writes 3.1 GiB", run(REFERENCE_OUTPUTS, "generate", "--help").stdout)

    def test_npy_files_load_with_numpy_and_match_the_metadata(self):
        for dtype in DTYPES:
            for ic in SWEEP:
                meta = self.metadata(dtype, ic)
                self.assertEqual(meta["dtypes"], {"conv2d": f"torch.{dtype}", "matmul": f"torch.{dtype}"})
                for op, name in TENSORS:
                    array = np.load(path(self.dir, dtype, ic, op, name))
                    self.assertEqual(array.dtype, np.float32)
                    self.assertTrue(array.flags.c_contiguous)
                    self.assertEqual(list(array.shape), meta["shapes"][op][name], (dtype, ic, op, name))
                    group = "input_hashes" if name != "output" else "output_hashes"
                    self.assertEqual(hashlib.sha256(array.tobytes()).hexdigest(), meta[group][op][name])
                    if dtype == "bfloat16":  # widened exactly: the low 16 bits are zero
                        self.assertFalse((array.view(np.uint32) & 0xFFFF).any())
        self.assertEqual(np.load(path(self.dir, "float32", 16, "matmul", "A")).shape, (1024, 144))

    def test_inputs_equal_python_torch_for_the_same_seed(self):
        for dtype, torch_dtype in DTYPES.items():
            for ic in SWEEP:
                torch.manual_seed(42)
                conv = [torch.randn(1, ic, 32, 32, dtype=torch_dtype), torch.randn(32, ic, 3, 3, dtype=torch_dtype),
                        torch.randn(32, dtype=torch_dtype)]
                torch.manual_seed(42)
                mm = [torch.randn(1024, ic * 9, dtype=torch_dtype), torch.randn(ic * 9, 32, dtype=torch_dtype)]
                for (op, name), expected in zip(INPUTS, conv + mm):
                    loaded = np.load(path(self.dir, dtype, ic, op, name))
                    self.assertTrue(np.array_equal(loaded, expected.float().numpy()), (dtype, ic, op, name))

    def test_outputs_equal_python_torch_from_the_loaded_inputs(self):
        for dtype, torch_dtype in DTYPES.items():
            for ic in SWEEP:
                def load(op, name):
                    return torch.from_numpy(np.load(path(self.dir, dtype, ic, op, name))).to(torch_dtype)
                conv = torch.nn.functional.conv2d(load("conv2d", "input"), load("conv2d", "weight"),
                                                  load("conv2d", "bias"), stride=1, padding=1)
                mm = torch.matmul(load("matmul", "A"), load("matmul", "B"))
                for op, expected in (("conv2d", conv), ("matmul", mm)):
                    got = torch.from_numpy(np.load(path(self.dir, dtype, ic, op, "output")))
                    if dtype == "float32":
                        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
                    else:  # the same bfloat16 result, widened
                        torch.testing.assert_close(got, expected.float(), rtol=1.6e-2, atol=1e-5)

    def test_verify_passes(self):
        proc = run(REFERENCE_OUTPUTS, "verify", self.dir)
        for dtype in DTYPES:
            for ic in SWEEP:
                self.assertIn(f"✓ {dtype} ic={ic} K={ic * 9}", proc.stdout)
        self.assertIn("4 of 4 cases verified", proc.stdout)

    def test_verify_fails_on_a_flipped_byte(self):
        broken = self.copy("flipped")
        target = path(broken, "float32", 16, "conv2d", "weight")
        with open(target, "r+b") as f:
            f.seek(200)
            byte = f.read(1)
            f.seek(200)
            f.write(bytes([byte[0] ^ 0x01]))
        proc = run(REFERENCE_OUTPUTS, "verify", broken, check=False)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("✗ float32 ic=16 K=144", proc.stdout)
        self.assertIn("conv2d/weight: file data differs from the metadata hash", proc.stdout)
        self.assertIn("✓ float32 ic=8 K=72", proc.stdout)
        self.assertIn("3 of 4 cases verified", proc.stdout)

    def test_compare_with_itself_is_zero_ulp(self):
        proc = run(REFERENCE_OUTPUTS, "compare", self.dir, self.dir)
        lines = [l for l in proc.stdout.splitlines() if " ic=" in l]
        self.assertEqual(len(lines), 4)
        for line in lines:
            self.assertTrue(line.startswith("✓ "), line)
            self.assertEqual(re.findall(r"max ULP (\d+)", line), ["0", "0"])
            self.assertEqual(re.findall(r"mean ULP ([\d.]+)", line), ["0.0000", "0.0000"])

    def test_compare_reports_one_ulp(self):
        for dtype, step in (("bfloat16", 1 << 16), ("float32", 1)):
            nudged = self.copy("nudged-" + dtype)
            target = path(nudged, dtype, 8, "matmul", "output")
            array = np.load(target)
            bits = array.view(np.uint32)
            bits[3, 5] += step  # one step away from zero in magnitude, either sign
            np.save(target, array)
            proc = run(REFERENCE_OUTPUTS, "compare", self.dir, nudged, check=False)
            self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
            line = next(l for l in proc.stdout.splitlines() if f"{dtype} ic=8 " in l)
            self.assertTrue(line.startswith("✗ "), line)
            self.assertEqual(re.findall(r"max ULP (\d+)", line), ["0", "1"])
            mean = float(re.findall(r"matmul mean ULP ([\d.]+)", line)[0])
            self.assertAlmostEqual(mean, round(1 / (1024 * 32), 4))
            proc = run(REFERENCE_OUTPUTS, "compare", self.dir, nudged, "--max-ulp", "1")
            self.assertIn("4 of 4 cases within 1 ULP", proc.stdout)

    def test_compare_names_cases_on_one_side_only(self):
        partial = self.copy("partial")
        for f in os.listdir(os.path.join(partial, "bfloat16")):
            if f.startswith(prefix(16)):
                os.remove(os.path.join(partial, "bfloat16", f))
        proc = run(REFERENCE_OUTPUTS, "compare", self.dir, partial, check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("✗ bfloat16 ic=16 K=144: only in A", proc.stdout)

    def test_summary_lists_the_cases(self):
        proc = run(REFERENCE_OUTPUTS, "summary", self.dir)
        self.assertIn("Cases (4):", proc.stdout)
        for dtype in DTYPES:
            for ic in SWEEP:
                self.assertIn(f"{dtype} ic={ic} K={ic * 9}  {prefix(ic)}", proc.stdout)
        self.assertIn("libtorch_version: 2.11.0", proc.stdout)

    def test_cuda_absent_falls_back_to_the_cpu_with_a_warning(self):
        if torch.cuda.is_available():
            self.skipTest("CUDA is available here: no fallback to test")
        for extra, tf32, precision in (([], False, "highest"), (["--allow-tf32"], True, "high")):
            out = os.path.join(self._tmp.name, "fallback")
            shutil.rmtree(out, ignore_errors=True)
            proc = run(REFERENCE_OUTPUTS, "generate", "--device", "cuda", "--out", out, "--ic", "8",
                       *extra)
            self.assertIn("CUDA was asked for (cuda) but is not available; using the CPU", proc.stderr)
            with open(os.path.join(out, "system_info.json"), encoding="utf-8") as f:
                info = json.load(f)
            self.assertEqual((info["requested_device"], info["device"]), ("cuda", "cpu"))
            self.assertEqual((info["cudnn_allow_tf32"], info["cuda_matmul_allow_tf32"],
                              info["float32_matmul_precision"]), (tf32, tf32, precision))
            self.assertNotIn("cudnn_version", info)
            self.assertIn("2 of 2 cases verified", run(REFERENCE_OUTPUTS, "verify", out).stdout)

    def test_bad_input_exits_2(self):
        missing = os.path.join(self._tmp.name, "missing")
        for args, message in ((["verify", missing], "no such directory"),
                              (["summary", missing], "no such directory"),
                              (["compare", self.dir, missing], "no such directory"),
                              (["frobnicate"], "unknown subcommand 'frobnicate'"),
                              ([], "usage:"),
                              (["generate", "--device", "tpu", "--out", missing], "expected cpu, cuda or cuda:N"),
                              (["verify", self._tmp.name], "config.json: missing")):
            proc = run(REFERENCE_OUTPUTS, *args, check=False)
            self.assertEqual(proc.returncode, 2, (args, proc.stdout, proc.stderr))
            self.assertIn(message, proc.stdout + proc.stderr, args)
        self.assertFalse(os.path.exists(missing))


if __name__ == "__main__":
    unittest.main()
