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
import torch.nn.functional as F

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


class ConvNet(torch.nn.Module):
    """conv+BatchNorm+ReLU twice (3 -> 64 -> 128 channels), `groups` in the second convolution;
    BatchNorm on batch statistics only (the decomposed export writes running statistics into
    the inputs, which the joint trace refuses; the helper's TS2EPConverter graphs do not)."""

    def __init__(self, groups=1):
        super().__init__()
        self.groups = groups

    def forward(self, x, w1, g1, b1, w2, g2, b2):
        y = F.relu(F.batch_norm(F.conv2d(x, w1, padding=1), None, None, g1, b1, True))
        y = F.conv2d(y, w2, padding=1, groups=self.groups)
        return (F.relu(F.batch_norm(y, None, None, g2, b2, True)),)


class ConvDropout(torch.nn.Module):
    """squeezenet1_1's classifier: dropout of a convolution's output, then a 1x1 convolution."""

    def forward(self, x, w1, w2):
        y = F.dropout(F.relu(F.conv2d(x, w1, padding=1)), 0.5, training=True)
        return (F.conv2d(y, w2),)


class Mlp(torch.nn.Module):
    def forward(self, x, w1, w2):
        return (F.linear(F.relu(F.linear(x, w1)), w2),)


def is_channels_last(value):
    return value.is_contiguous(memory_format=torch.channels_last) and not value.is_contiguous()


class JointTrainStepLayout(unittest.TestCase):
    """Inductor's layout optimization decided for the joint graph as Python's training compile
    decides it, and the backward convolutions traced channels_last where it is on: traced NCHW,
    every convolution_backward made the package copy activations and gradients back to NCHW,
    which cuDNN transposed again (resnet50 1.5x slower than Python's compile on an H100).
    Small CPU tensors with oneDNN off: Inductor's heuristic is then the one it runs for CUDA
    (with oneDNN it says yes to every CPU conv net), and the CPU's convolutions pass
    channels_last on as cuDNN's do (the meta device's convolutions return NCHW whatever the
    input)."""

    def setUp(self):
        flags = torch.backends.mkldnn.flags(enabled=False)
        flags.__enter__()
        self.addCleanup(flags.__exit__, None, None, None)

    def train_step(self, module, example, state, parameter_count):
        # As TS2EPConverter gives the helper LibTorch's aten::_convolution: aten.convolution (the
        # export keeps aten.conv2d, lowered here by its decomposition alone).
        exported = torch.export.export(module, (*example, *state), strict=False)
        conv2d = torch.ops.aten.conv2d.default
        exported = exported.run_decompositions(
            {conv2d: torch.export.default_decompositions()[conv2d]})
        notes = {}
        step, _, _ = export_train_step(exported, example, state, parameter_count, amp=False,
                                       notes=notes)
        return step, notes["layout_optimization"]

    def conv_net(self, groups=1):
        x = torch.randn(2, 3, 8, 8)
        shapes = [(64, 3, 3, 3), (64,), (64,), (128, 64 // groups, 3, 3), (128,), (128,)]
        state = tuple(torch.randn(shape) for shape in shapes)
        return self.train_step(ConvNet(groups), (x,), state, parameter_count=6), state

    @staticmethod
    def convolution_backward_layouts(step):
        """[grad_output, input] channels_last? for each convolution_backward once Inductor's
        decompositions ran (BatchNorm's backward in pointwise ops, as Inductor lowers it): the
        strides Inductor holds its convolution_backward fallback to."""
        from torch._inductor.decomposition import select_decomp_table

        graph = step.run_decompositions(select_decomp_table()).graph_module.graph
        return [[is_channels_last(a.meta["val"]) for a in node.args[:2]]
                for node in graph.nodes
                if node.target is torch.ops.aten.convolution_backward.default]

    def test_conv_net_is_traced_channels_last_with_eager_strides_out(self):
        (step, layout), state = self.conv_net()
        self.assertTrue(layout["on"], layout)
        self.assertIn("training heuristic", layout["reason"])
        self.assertEqual(self.convolution_backward_layouts(step), [[True, True], [True, True]])
        output = next(node for node in step.graph_module.graph.nodes if node.op == "output")
        strides = [value.meta["val"].stride() for value in output.args[0]]
        # loss, the NCHW prediction as eager returns it, the gradients with the parameters'
        # strides (the child copies them into .grad).
        prediction = torch.empty(2, 128, 8, 8)
        self.assertEqual(strides, [(), prediction.stride(), *(s.stride() for s in state)])

    def test_grouped_convolution_keeps_nchw(self):
        (step, layout), _ = self.conv_net(groups=2)
        self.assertFalse(layout["on"], layout)
        self.assertIn("grouped convolution", layout["reason"])
        self.assertEqual(self.convolution_backward_layouts(step), [[False, False]] * 2)

    def test_dropout_draws_in_eager_layout_in_a_channels_last_trace(self):
        # The CPU's dropout fills its noise in the input's memory order: drawn over a
        # channels_last activation, eager's seeded mask lands on other elements (squeezenet1_1's
        # train step FAILed --verify), so the draw reads the activation in eager's NCHW order.
        # Converted as the helper converts LibTorch's trace: torch.export would give
        # native_dropout, the TorchScript's aten::dropout becomes aten.dropout.
        from torch._export.converter import TS2EPConverter

        from benchmatrix_compile.__main__ import static_shapes_in_ts2ep

        x = torch.randn(2, 3, 8, 8)
        state = (torch.randn(128, 3, 3, 3), torch.randn(16, 128, 1, 1))
        traced = torch.jit.trace(ConvDropout(), (x, *state), check_trace=False)
        with static_shapes_in_ts2ep():
            exported = TS2EPConverter(traced, (x, *state)).convert()
        notes = {}
        step, _, _ = export_train_step(exported, (x,), state, 2, amp=False, notes=notes)
        self.assertTrue(notes["layout_optimization"]["on"], notes)
        # Drawn over a flat tensor (no layout for Inductor to change) that is the activation
        # permuted to eager's memory order: NCHW, not the trace's NHWC.
        draws = [node for node in step.graph_module.graph.nodes
                 if node.target is torch.ops.aten.bernoulli.p]
        self.assertEqual([d.meta["val"].shape for d in draws], [torch.Size([2 * 128 * 8 * 8])])
        source = draws[0].args[0]
        while source.target is not torch.ops.aten.permute.default:
            source = source.args[0]
        self.assertEqual(source.args[1], [0, 1, 2, 3])
        self.assertTrue(is_channels_last(source.args[0].meta["val"]))
        # The first convolution's backward stays channels_last through the dropout's (the last
        # one's grad_output is the loss's expanded scalar, in no layout).
        self.assertEqual(self.convolution_backward_layouts(step)[-1], [True, True])

    def test_mlp_has_no_layout_optimization(self):
        x = torch.randn(4, 16)
        state = (torch.randn(32, 16), torch.randn(8, 32))
        _, layout = self.train_step(Mlp(), (x,), state, parameter_count=2)
        self.assertEqual(layout, {"on": False, "reason": "no convolution"})


if __name__ == "__main__":
    unittest.main()
