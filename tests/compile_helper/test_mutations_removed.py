"""In-place ops on constant-only values made out-of-place before the TorchScript -> ExportedProgram
conversion (python/benchmatrix_compile/mutations_removed.py). What a user would notice: a model
whose program adds in place into a value computed from sizes alone (transformers' T5 family,
`relative_buckets += ...`) failing every inductor compile with "aot_autograd expected to have an
entirely functional graph"; or, if the pass went too far, a program whose in-place update of its
input is lost."""
import os
import sys
import unittest
import warnings

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from benchmatrix_compile.__main__ import static_shapes_in_ts2ep  # noqa: E402
from benchmatrix_compile.mutations_removed import remove_mutations  # noqa: E402


class RelativeBuckets(torch.nn.Module):
    """T5's bucket arithmetic in small: computed from a fixed length only, so the converter's
    freezing folds it into constants up to the in-place add."""

    def forward(self, x):
        position = torch.arange(4)
        relative = position[None, :] - position[:, None]
        buckets = (relative > 0).to(torch.long) * 4
        buckets += relative.abs()
        return (x + buckets.to(x.dtype),)


class InputUpdatedInPlace(torch.nn.Module):
    def forward(self, x):
        x.add_(1.0)
        return (x * 2.0,)


def traced(module, example):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.trace(module, example, check_trace=False)


def exported(program, example):
    from torch._export.converter import TS2EPConverter

    with static_shapes_in_ts2ep():
        return TS2EPConverter(program, example).convert()


def aot_export(exported_program, example):
    """What AOTInductor's compile does first with the program (no code generation)."""
    from torch._functorch.aot_autograd import aot_export_module

    return aot_export_module(exported_program.module(), example, trace_joint=False)


class MutationsRemoved(unittest.TestCase):
    example = (torch.arange(16.0).reshape(4, 4),)

    def test_in_place_add_on_constants_fails_aot_export_as_converted(self):
        # The failure the pass exists for; if this stops failing, torch handles it itself.
        program = traced(RelativeBuckets(), self.example)
        with self.assertRaisesRegex(AssertionError, "entirely functional graph"):
            aot_export(exported(program, self.example), self.example)

    def test_removed_program_exports_and_computes_the_same(self):
        program = traced(RelativeBuckets(), self.example)
        expected = program(*self.example)[0]
        self.assertEqual(remove_mutations(program), 1)
        converted = exported(program, self.example)
        aot_export(converted, self.example)
        self.assertTrue(torch.equal(converted.module()(*self.example)[0], expected))
        self.assertTrue(torch.equal(program(*self.example)[0], expected))

    def test_update_of_an_input_stays_in_place(self):
        program = traced(InputUpdatedInPlace(), (torch.zeros(3),))
        self.assertEqual(remove_mutations(program), 0)
        x = torch.zeros(3)
        program(x)
        self.assertTrue(torch.equal(x, torch.ones(3)))


if __name__ == "__main__":
    unittest.main()
