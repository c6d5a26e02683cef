"""The train step's joint graph partitioned as torch.compile partitions it and joined again (issue
50, python/benchmatrix_compile/joint_partition.py), on the CPU without compiling: the step's
exported program run eagerly, partitioned and as traced (BENCHMATRIX_TRAIN_PARTITION=0).

- The partitioned step computes what the traced one does: loss, prediction, every gradient and
  the updated BatchNorm statistics, also with dropout drawn from a seeded generator (a random op
  the partitioner recomputed in the backward would draw a second, different mask).
- Its backward keeps less of the forward: a conv-BatchNorm-ReLU network's saved activations are
  fewer bytes than when the backward recomputes nothing (what compiling the joint graph as traced
  keeps alive across the step), the memory torch.compile's step saves (resnet50 on an H200:
  3.32 GB peak against about 1.8 GB, 2026-12-02).
- The switch: 0 keeps the joint graph as traced, another value is refused."""
import os
import sys
import unittest
from unittest import mock

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from benchmatrix_compile.train_step import export_train_step  # noqa: E402
from test_conv_backward_layout import ConvNet  # noqa: E402


class DropoutNet(torch.nn.Module):
    """Linear-ReLU-Dropout-Linear, state as inputs as the C++ child traces it."""

    def __init__(self):
        super().__init__()
        net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Dropout(0.3),
                                  torch.nn.Linear(32, 4))
        self.parameter_names = [n for n, _ in net.named_parameters()]
        self.state = tuple(p.detach().clone() for p in net.parameters())
        self.net = (net,)

    def forward(self, x, *state):
        parameters = dict(zip(self.parameter_names, state))
        return (torch.func.functional_call(self.net[0], parameters, (x,)),)


def step_outputs(model, x, setting, seed=0):
    """(outputs of the exported train step run eagerly on fresh copies of the state, notes)."""
    model.net[0].train()
    exported = torch.export.export(model, (x, *model.state), strict=False)
    notes = {}
    with mock.patch.dict(os.environ, {"BENCHMATRIX_TRAIN_PARTITION": setting}):
        step, _, _ = export_train_step(exported, (x,), model.state, len(model.parameter_names),
                                       amp=False, notes=notes)
    torch.manual_seed(seed)
    return step.module()(*(t.clone() for t in model.state), x), notes


class JointPartition(unittest.TestCase):
    def assert_same_outputs(self, partitioned, traced):
        self.assertEqual(len(partitioned), len(traced))
        for i, (a, b) in enumerate(zip(partitioned, traced)):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=f"output {i}")

    def test_partitioned_conv_step_computes_what_the_traced_one_does(self):
        torch.manual_seed(0)
        model, x = ConvNet(), torch.randn(2, 3, 16, 16)
        partitioned, notes = step_outputs(model, x, "1")
        traced, traced_notes = step_outputs(model, x, "0")
        self.assert_same_outputs(partitioned, traced)
        self.assertNotIn("train_partition", traced_notes)
        report = notes["train_partition"]
        # The backward recomputes BatchNorm's normalised input and the ReLU from the saved
        # convolution outputs instead of keeping them: a third less here.
        self.assertLess(report["saved_bytes"], 0.75 * report["saved_bytes_without_recompute"],
                        report)

    def test_dropout_masks_are_drawn_once_as_in_the_traced_step(self):
        torch.manual_seed(0)
        model, x = DropoutNet(), torch.randn(16, 8)
        partitioned, _ = step_outputs(model, x, "1", seed=3)
        traced, _ = step_outputs(model, x, "0", seed=3)
        self.assert_same_outputs(partitioned, traced)
        other_seed, _ = step_outputs(model, x, "1", seed=4)  # the masks do matter here
        self.assertFalse(torch.equal(other_seed[1], partitioned[1]))

    def test_another_setting_is_refused(self):
        model, x = DropoutNet(), torch.randn(4, 8)
        with self.assertRaises(SystemExit) as stopped:
            step_outputs(model, x, "yes")
        self.assertEqual(stopped.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
