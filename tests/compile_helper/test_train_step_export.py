"""The compile helper's joint train step (python/benchmatrix_compile/train_step.py) on the CPU,
without a GPU: autocast's float16-in, float32-out softmax (`_softmax(x, dim, half_to_float=True)`,
what autocast runs for softmax on CUDA; BERT_pytorch's attention) must give the float16 scores a
float16 gradient after the compiler's decompositions, else the package's backward matmul of it
with a float16 operand fails at run time ("expected mat1 and mat2 to have the same dtype").
Traced on the meta device: the CPU has no half_to_float softmax kernel, and a fake CUDA tensor
needs a CUDA device in the autograd engine."""
import os
import sys
import unittest

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from benchmatrix_compile.train_step import export_train_step  # noqa: E402


class AutocastAttention(torch.nn.Module):
    """One attention head as autocast runs it on CUDA: float16 matmuls, softmax in float32."""

    def forward(self, x, wq, wk, wv):
        q, k, v = (x @ wq).half(), (x @ wk).half(), (x @ wv).half()
        scores = q @ k.transpose(-2, -1)
        probabilities = torch.ops.aten._softmax(scores, -1, True)
        return (probabilities.half() @ v,)


def mixed_dtype_matmuls(program, decompositions):
    """(node name, dtypes) of every mm/bmm whose operands differ in dtype once `decompositions`
    (the compiler's table) are applied to `program`."""
    graph = program.run_decompositions(decompositions).graph_module.graph
    matmuls = (torch.ops.aten.mm.default, torch.ops.aten.bmm.default)
    return [(node.name, {a.meta["val"].dtype for a in node.args[:2]})
            for node in graph.nodes
            if node.op == "call_function" and node.target in matmuls
            and len({a.meta["val"].dtype for a in node.args[:2]}) > 1]


class JointTrainStepDtypes(unittest.TestCase):
    def train_step(self, toolchain):
        x = torch.randn(2, 8, 16, device="meta")
        state = tuple(torch.randn(16, 16, device="meta") for _ in range(3))
        exported = torch.export.export(AutocastAttention(), (x, *state), strict=False)
        step, _, _ = export_train_step(exported, (x,), state, parameter_count=3, amp=True,
                                       toolchain=toolchain)
        return step

    def test_inductor_step_matmuls_have_one_dtype(self):
        from torch._inductor.decomposition import select_decomp_table

        step = self.train_step("inductor")
        self.assertEqual(mixed_dtype_matmuls(step, select_decomp_table()), [])

    def test_stablehlo_step_matmuls_have_one_dtype_and_no_inductor_ops(self):
        from torch._decomp import core_aten_decompositions

        step = self.train_step("stablehlo")
        self.assertEqual(mixed_dtype_matmuls(step, core_aten_decompositions()), [])
        targets = {str(node.target) for node in step.graph_module.graph.nodes}
        self.assertFalse([t for t in targets if "fma" in t], targets)

    def test_unknown_toolchain_is_refused(self):
        with self.assertRaisesRegex(ValueError, "unknown toolchain 'xla'"):
            self.train_step("xla")


if __name__ == "__main__":
    unittest.main()
