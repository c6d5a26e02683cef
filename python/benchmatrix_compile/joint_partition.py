"""The joint train graph partitioned as torch.compile partitions it, then joined into one graph
again (issue 50).

torch.compile trains with AOTAutograd's two graphs: the joint forward+backward graph, traced with
Inductor's decompositions (BatchNorm as a var_mean and pointwise ops), goes through
min_cut_rematerialization_partition, which chooses the forward values the backward keeps (the
saved activations: the convolutions' outputs, ...) and has the backward recompute the cheap rest
(BatchNorm's centred and normalised input, ...) from them. train_step.py compiles the whole step
as one graph (one call per step, one package); compiled as traced, every forward value that the
backward reads stays alive from its forward kernel to its backward use, and Inductor realises
BatchNorm's intermediates for the backward: resnet50's inductor step peaked at 3.32 GB of device
memory against about 1.8 GB for torch.compile's step (one H200, 2026-12-02, batch 32).

partitioned_joint() runs the same partitioner on the joint graph and stitches its forward and
backward graphs back into one: the forward's nodes, then the loss's gradient seed (ones, what the
joint graph's ones_like(loss) was), then the backward's nodes reading the saved values; the
recomputations are nodes of the backward part, so the stitched graph holds across the seam only
what torch.compile's forward saves. Its inputs and outputs are the joint graph's, in the same
order.

The joint graph must have been traced with aten.ones_like kept (trace_decompositions()): the
partitioner needs the backward's seed as an input (its tangent), and ones_like(loss) is how the
trace writes that seed; Inductor's table would turn it into an anonymous full([], 1).

Off by default (BENCHMATRIX_TRAIN_PARTITION unset or 0: the joint graph compiled as traced, with
only train_step.joint_trace_decompositions); BENCHMATRIX_TRAIN_PARTITION=1 turns it on. On the
build machine's CPU it did not pay (2026-12-06, bench/train_setting_ab.sh, batch 4): resnet50's
step 1109 against 957 ms, resnet18's equal, the child's peak RSS unchanged, resnet50's cold
compile 100 against 72 s (the partition and the larger decomposed graph's export); its backward
saved 335 MB of activations, against 478 MB with nothing recomputed. Whether it brings the CUDA
step to torch.compile's memory and speed is the GPU A/B's to say (BENCHMARKS.md "Train step").
"""
import copy

import torch

from benchmatrix_compile.switches import switch

SETTING = "BENCHMATRIX_TRAIN_PARTITION"


def enabled():
    return switch(SETTING, "0 or unset (the joint graph compiled as traced) or 1 (partitioned by "
                           "AOTAutograd's min-cut partitioner, then joined again)") == "1"


def trace_decompositions():
    """The decompositions torch.compile traces its joint graph with (Inductor's table), as
    Inductor selects them under fallback_random, which the train step compiles with (random ops
    stay ATen's: native_dropout, bernoulli), but for aten.ones_like, which stays the backward's
    recognisable seed."""
    from torch._inductor.decomposition import select_decomp_table

    with torch._inductor.config.patch(fallback_random=True):
        table = select_decomp_table()
    return {op: decomposition for op, decomposition in table.items()
            if op is not torch.ops.aten.ones_like.default}


def _seed_of(graph, loss):
    """The ones_like(loss) node that starts the backward."""
    seeds = [node for node in graph.find_nodes(op="call_function",
                                               target=torch.ops.aten.ones_like.default)
             if node.args and node.args[0] is loss]
    if len(seeds) != 1:
        raise ValueError(f"the joint graph has {len(seeds)} ones_like({loss.name}) seeds of its "
                         f"backward, expected 1 (traced with trace_decompositions()?)")
    return seeds[0]


def _saved_bytes(forward_graph, forward_output_count):
    """Bytes of the tensors the forward graph passes to the backward that are not graph inputs
    (the parameters, buffers and inputs are alive for the whole step anyway)."""
    output = forward_graph.find_nodes(op="output")[0]
    total = 0
    for node in output.args[0][forward_output_count:]:
        value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        if node.op != "placeholder" and isinstance(value, torch.Tensor):
            total += value.untyped_storage().nbytes()
    return total


def partitioned_joint(joint, loss_index, forward_output_count, static_input_count):
    """`joint`: aot_export_module's trace_joint GraphModule, whose outputs are
    `forward_output_count` forward values (the updated buffers, then the loss at `loss_index`
    and the prediction), then the gradients; its first `static_input_count` inputs (the
    parameters and buffers) live for the whole step, so the partitioner may keep them for free.
    Returns (one GraphModule with joint's inputs and outputs, split by
    min_cut_rematerialization_partition and stitched back; a report: {"saved_bytes": what its
    backward reads of the forward's values, "saved_bytes_without_recompute": the same for
    AOTAutograd's default_partition, which recomputes nothing}). `joint` itself is not changed."""
    from torch._functorch.partitioners import (default_partition,
                                               min_cut_rematerialization_partition)

    joint = torch.fx.GraphModule(joint, copy.deepcopy(joint.graph))
    graph = joint.graph
    placeholders = list(graph.find_nodes(op="placeholder"))
    loss = graph.find_nodes(op="output")[0].args[0][loss_index]
    # The partitioner tells the forward's inputs from the backward's by name, as AOTAutograd
    # names them: primals_N, tangents_N.
    for i, node in enumerate(placeholders, start=1):
        node.name = node.target = f"primals_{i}"
    seed = _seed_of(graph, loss)
    # And by tag, as AOTAutograd tags the joint graph it traces itself: the nodes traced in the
    # forward call (before the seed), then the backward's.
    tag = "is_forward"
    for node in graph.nodes:
        if node is seed:
            tag = "is_backward"
        if node.op == "call_function":
            node.meta["partitioner_tag"] = tag
    with graph.inserting_after(placeholders[-1]):
        tangent = graph.placeholder("tangents_1")
    tangent.meta = dict(seed.meta)
    seed.replace_all_uses_with(tangent)
    graph.erase_node(seed)
    joint.recompile()

    static = list(range(static_input_count))
    forward, backward = min_cut_rematerialization_partition(
        joint, None, num_fwd_outputs=forward_output_count,
        static_lifetime_input_indices=static)
    plain_forward, _ = default_partition(joint, None, num_fwd_outputs=forward_output_count,
                                         static_lifetime_input_indices=static)
    report = {"saved_bytes": _saved_bytes(forward.graph, forward_output_count),
              "saved_bytes_without_recompute": _saved_bytes(plain_forward.graph,
                                                            forward_output_count)}
    return _stitched(joint, forward, backward, loss_index, forward_output_count), report


def _stitched(root, forward, backward, loss_index, forward_output_count):
    """One GraphModule: forward's nodes, ones_like(loss) as the backward's tangent, backward's
    nodes fed by name from the forward's outputs and inputs; returns the forward's first
    `forward_output_count` outputs, then the backward's (the joint graph's order)."""
    graph = torch.fx.Graph()
    values = {}
    for node in forward.graph.find_nodes(op="placeholder"):
        values[node] = graph.placeholder(node.name)
        values[node].meta = dict(node.meta)
    forward_outputs = graph.graph_copy(forward.graph, values)
    forward_output_nodes = forward.graph.find_nodes(op="output")[0].args[0]
    by_name = {node.name: value for node, value in zip(forward_output_nodes, forward_outputs)
               if isinstance(node, torch.fx.Node)}
    by_name.update({node.name: value for node, value in values.items()})
    loss = forward_outputs[loss_index]
    ones = graph.call_function(torch.ops.aten.ones_like.default, (loss,))
    ones.meta = dict(loss.meta)
    backward_values = {}
    for node in backward.graph.find_nodes(op="placeholder"):
        if node.name.startswith("tangents_"):
            backward_values[node] = ones
        elif node.name in by_name:
            backward_values[node] = by_name[node.name]
        else:
            raise ValueError(f"the partitioned backward reads {node.name}, which the forward "
                             f"neither takes nor returns")
    gradients = graph.graph_copy(backward.graph, backward_values)
    graph.output((*forward_outputs[:forward_output_count], *gradients))
    stitched = torch.fx.GraphModule(root, graph)
    stitched.graph.lint()
    return stitched
