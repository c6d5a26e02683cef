"""Our train-step optimizer (torch_support/multi_tensor_optimizer, driven through the
optimizer_step executable) against Python's torch.optim on the same parameters and gradients.

Plain mode must match torch.optim bitwise for every dtype, with foreach=True (Python's default on
CUDA) and foreach=False (its default on the CPU); capturable mode (the one inside CUDA graphs) must
match torch.optim.Adam(fused=True) bitwise.
"""

import os
import subprocess
import tempfile
import unittest

import torch

OPTIMIZER_STEP = os.environ["OPTIMIZER_STEP"]
SHAPES = [(3, 4), (5,), (2, 3, 2), (17, 9), ()]
STEPS = 6
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def make_case(dtype):
    """Parameters and per-step gradients; parameter 1 has no gradient on step 2 (skipped)."""
    generator = torch.Generator().manual_seed(2024)
    params = [torch.randn(shape, generator=generator).to(dtype) for shape in SHAPES]
    grads = []
    for step in range(STEPS):
        grads.append([None if (step == 2 and i == 1) else
                      (torch.randn(p.shape, generator=generator) * 10 ** (i - 2)).to(dtype)
                      for i, p in enumerate(params)])
    return params, grads


def assert_identical(a, b):
    """Equal values, NaN where the other has NaN (float16 Adam divides by eps = 0 in float16 where
    a gradient's square underflows, in torch.optim as in ours)."""
    torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)


def python_step(algorithm, params, grads, foreach, fused=None):
    leaves = [p.clone().requires_grad_(True) for p in params]
    optimizer_class = torch.optim.Adam if algorithm == "adam" else torch.optim.SGD
    optimizer = optimizer_class(leaves, lr=0.01, foreach=foreach, fused=fused)
    for step_grads in grads:
        optimizer.zero_grad()
        for leaf, grad in zip(leaves, step_grads):
            leaf.grad = None if grad is None else grad.clone()
        optimizer.step()
    return [leaf.detach() for leaf in leaves]


def our_step(algorithm, mode, params, grads):
    with tempfile.TemporaryDirectory() as directory:
        source = os.path.join(directory, "input.pt")
        result = os.path.join(directory, "output.pt")
        torch.save({"params": params, "grads": grads}, source)
        subprocess.run([OPTIMIZER_STEP, algorithm, mode, source, result], check=True)
        # LibTorch pickles a typed list (torch.jit._pickle globals); the file is our own.
        return torch.load(result, weights_only=False)


class OptimizerNumerics(unittest.TestCase):
    def check_bitwise(self, algorithm):
        for dtype in DTYPES:
            params, grads = make_case(dtype)
            ours = our_step(algorithm, "plain", params, grads)
            for foreach in (True, False):
                theirs = python_step(algorithm, params, grads, foreach)
                for i, (a, b) in enumerate(zip(ours, theirs)):
                    with self.subTest(dtype=dtype, foreach=foreach, parameter=i):
                        self.assertEqual(a.dtype, b.dtype)
                        assert_identical(a, b)
            # The steps moved the parameters (a test of an optimizer that does nothing would pass
            # the comparison above only if torch.optim did nothing too).
            self.assertFalse(torch.equal(ours[0], params[0]))
            if algorithm == "adam":
                # Parameter 1 skipped its step 2 (no gradient): unlike a zero gradient, that
                # leaves its moments and step count alone.
                zero_grads = [list(g) for g in grads]
                zero_grads[2][1] = torch.zeros_like(params[1])
                self.assertFalse(torch.equal(python_step(algorithm, params, zero_grads, True)[1],
                                             ours[1]))

    def test_adam_matches_torch_optim_bitwise(self):
        self.check_bitwise("adam")

    def test_sgd_matches_torch_optim_bitwise(self):
        self.check_bitwise("sgd")

    def test_capturable_adam_matches_torch_optim_fused_bitwise(self):
        # Capturable mode is torch.optim.Adam(fused=True): the step counter on the device.
        for dtype in DTYPES:
            params, grads = make_case(dtype)
            ours = our_step("adam", "capturable", params, grads)
            theirs = python_step("adam", params, grads, foreach=None, fused=True)
            for i, (a, b) in enumerate(zip(ours, theirs)):
                with self.subTest(dtype=dtype, parameter=i):
                    assert_identical(a, b)

    def test_bad_arguments_are_named(self):
        run = subprocess.run([OPTIMIZER_STEP, "adagrad", "plain", "in.pt", "out.pt"],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 1)
        self.assertIn("expected adam|sgd and plain|capturable, got adagrad plain", run.stderr)


if __name__ == "__main__":
    unittest.main()
