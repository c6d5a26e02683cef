"""convolution_backward in the joint train graph, in the layout torch.compile's backward gives it
(issue 50).

Inductor decides per graph whether its convolutions run channels-last (GraphLowering's
decide_layout_opt: on CUDA for convolution networks without grouped or in/out-channel-heavy
convolutions, e.g. resnet50; on the CPU whenever mkldnn runs them). torch.compile trains with two
graphs: the forward's convolutions and the BatchNorm/ReLU kernels after them come out
channels-last, and the backward graph is compiled with the strides the compiled forward returned,
so its convolution_backward calls get channels-last activations and gradients. convolution_backward
is an ATen fallback that Inductor constrains to the strides of the FX graph (constrain_to_fx_strides),
and the joint graph we compile whole (train_step.py) carries eager's strides, contiguous NCHW from
the trace: there the same fallback had every saved activation and incoming gradient copied back
to NCHW. resnet50 on the CPU with mkldnn off (Inductor's device-independent layout choice,
2026-12-06): all 53 of its convolution_backward calls took an NCHW input where torch.compile's
backward passed channels-last to all 53; on an H100 the cuDNN backward kernels ran NCHW in float16
with transposes around them (114 `nchwToNhwcKernel` per step, BENCHMARKS.md "Train step").

ChannelsLastConvolutionBackward, Inductor's post_grad_custom_post_pass (run on the graph just
before it is lowered): where Inductor will choose channels-last for the graph, it restates the FX
strides of each 4-d convolution_backward's grad_output and input as channels-last, so the fallback
takes the tensors as the forward made them (a producer that made NCHW gets a copy, as before but
the other way round). Graph inputs and outputs keep their strides: those are the package's
interface. BENCHMATRIX_CONV_BACKWARD_LAYOUT=0 keeps eager's strides (the joint graph as before),
for an A/B (bench/compile_helper_ab.py); unset or 1: channels-last where Inductor picks it.
"""
import torch
from torch._inductor.custom_graph_pass import CustomGraphPass

from benchmatrix_compile.switches import switch

SETTING = "BENCHMATRIX_CONV_BACKWARD_LAYOUT"


def enabled():
    return switch(SETTING, "0 (eager's NCHW strides, the joint graph as traced), 1 or unset "
                           "(channels-last where Inductor picks that layout for the graph)") != "0"


class _GraphAsModule:
    """What GraphLowering.decide_layout_opt reads of a GraphModule: its graph."""

    def __init__(self, graph):
        self.graph = graph


def channels_last_convolution_backward(graph):
    """Restates the FX strides of convolution_backward's grad_output and input as channels-last
    where Inductor lays this graph out channels-last; returns how many it restated."""
    from torch._inductor.graph import GraphLowering

    backward_convolutions = [node for node in graph.nodes
                             if node.target is torch.ops.aten.convolution_backward.default]
    if not backward_convolutions:
        return 0
    if not GraphLowering.decide_layout_opt(_GraphAsModule(graph), is_inference=True):
        return 0
    outputs = {n for node in graph.find_nodes(op="output") for n in node.all_input_nodes}
    restated = 0
    for node in backward_convolutions:
        for argument in node.args[:2]:  # grad_output, input
            if not isinstance(argument, torch.fx.Node) or argument.op == "placeholder" \
                    or argument in outputs:
                continue
            value = argument.meta.get("val")
            if getattr(value, "fake_mode", None) is None or value.dim() != 4 \
                    or value.is_contiguous(memory_format=torch.channels_last):
                continue  # no fake tensor to restate, not 4-d, or channels-last already
            with value.fake_mode:
                argument.meta["val"] = torch.empty_like(value, memory_format=torch.channels_last)
            restated += 1
    return restated


class ChannelsLastConvolutionBackward(CustomGraphPass):
    """The pass as Inductor's post_grad_custom_post_pass; `restated` counts what it changed."""

    def __init__(self):
        self.restated = 0

    def __call__(self, graph):
        self.restated += channels_last_convolution_backward(graph)

    def __deepcopy__(self, memo):
        return self  # compile_fx_aot deep-copies its config patches; the count stays here

    def uuid(self):
        return "benchmatrix-channels-last-convolution-backward-1"  # Inductor's cache key of it
