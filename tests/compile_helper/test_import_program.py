"""The import helper's program checks and rewrites (python/benchmatrix_import), on the CPU.

float16_fill_values: a float32 program traced
from a transformers-style attention mask (`masked_fill(mask, torch.finfo(dtype).min)`, dtype read
while tracing) must run on float16 scores, as the C++ train step runs it under CUDA's float16
autocast (DebertaV2's train configs failed there: "value cannot be converted to type c10::Half
without overflow"), and give the float32 results it gave before.

check_disk_space: a program larger than the cache's free space is refused with a message that
says so, before torch.jit.save would die in C++ (SIGABRT, a backtrace; BlenderbotForCausalLM's
18 GB float64 program on the H100's full disk)."""
import io
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from benchmatrix_import.__main__ import (  # noqa: E402
    NotEnoughDisk, check_disk_space, float16_fill_values)


class MaskedAttention(torch.nn.Module):
    def forward(self, scores, mask):
        lowest = torch.finfo(scores.dtype).min
        filled = scores.masked_fill(~mask, lowest)
        # a clamp at the same value is not a fill: it keeps float32's bound (on float32 values)
        return torch.softmax(filled, -1), scores.float().clamp(min=lowest)


def saved_and_loaded(traced):
    """The program as the C++ child gets it (benchmatrix_import saves it after the rewrite; the
    traced module's own executor keeps the plan of its first runs)."""
    buffer = io.BytesIO()
    torch.jit.save(traced, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)


def traced_program():
    scores = torch.randn(2, 4, 4)
    mask = torch.rand(2, 4, 4) > 0.3
    mask[..., 0] = True  # every row keeps a position
    traced = torch.jit.trace(MaskedAttention(), (scores, mask))
    return traced, scores, mask


class Float16FillValuesTest(unittest.TestCase):
    def test_the_float32_trace_overflows_float16_scores_without_it(self):
        traced, scores, mask = traced_program()
        with self.assertRaisesRegex(RuntimeError, "overflow"):
            saved_and_loaded(traced)(scores.half(), mask)

    def test_float16_scores_run_and_float32_results_stay(self):
        traced, scores, mask = traced_program()
        probabilities32, clamped32 = traced(scores, mask)
        self.assertEqual(float16_fill_values(traced), 1)  # the fill, not the clamp's bound
        program = saved_and_loaded(traced)
        after32, clamped_after = program(scores, mask)
        torch.testing.assert_close(after32, probabilities32, rtol=0, atol=0)
        torch.testing.assert_close(clamped_after, clamped32, rtol=0, atol=0)
        probabilities16, _ = program(scores.half(), mask)
        self.assertEqual(probabilities16.dtype, torch.float16)
        torch.testing.assert_close(probabilities16.float(), probabilities32, rtol=1e-2, atol=1e-3)
        self.assertTrue(torch.all(probabilities16[~mask] == 0))
        # the clamp keeps float32's lowest
        constants = [n.output().toIValue() for n in program.graph.findAllNodes("prim::Constant")
                     if n.output().type().kind() == "FloatType"]
        self.assertIn(torch.finfo(torch.float32).min, constants)



class CheckDiskSpaceTest(unittest.TestCase):
    def test_a_program_larger_than_the_free_space_is_refused_with_the_figures(self):
        linear = torch.nn.Linear(256, 256)  # 263 KB of parameters
        inputs = (torch.randn(4, 256),)
        traced = torch.jit.trace(linear, inputs)
        with tempfile.TemporaryDirectory() as directory:
            check_disk_space(traced, inputs, directory)  # the real disk has room
            usage = shutil.disk_usage(directory)
            full = usage._replace(free=10 << 20)  # 10 MiB left: less than the 16 MiB margin
            with mock.patch("shutil.disk_usage", return_value=full):
                with self.assertRaises(NotEnoughDisk) as raised:
                    check_disk_space(traced, inputs, directory)
            self.assertIn("0.02 GB", str(raised.exception))  # 263 KB + 1% + 16 MiB
            self.assertIn("0.01 GB are free", str(raised.exception))
            self.assertIn(directory, str(raised.exception))


if __name__ == "__main__":
    unittest.main()
