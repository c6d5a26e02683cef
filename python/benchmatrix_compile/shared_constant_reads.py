"""Inductor's freezing without its shared-constant failure (torch 2.11).

Freezing folds constant subgraphs, and after each fold `constant_fold`
(torch/_inductor/constant_folding.py) deletes the module attribute of every `get_attr` node left
without users. When two `get_attr` nodes read the same attribute and only one of them loses its
users, the attribute goes while the other node still reads it, and the graph lint fails:
"Node _tensor_constant6_1 target _tensor_constant6 references nonexistent attribute
_tensor_constant6". Our TorchScript-converted programs have such pairs on CUDA (a tensor constant
of the program read in two places): H200 x4 runs of 2026-11-28 saw every BERT-like huggingface model, nanogpt
and mobilenet_v3_large fail freezing, and the helper then compiled again without it, paying the
failed attempt (5-26 s on an H200 host) and a second conversion (2-13 s) in every such compile,
and giving a package without freezing's folding.

While `shared_constant_reads_merged()` is entered, every `constant_fold` that freezing runs first
makes the graph read each attribute through one node (the first in graph order, which precedes
every user of the others), so a node without users is the attribute's only reader and deleting the
attribute is sound. The merge changes no computation: the nodes read the same tensor.
"""

import contextlib


def merge_shared_constant_reads(graph_module):
    """Replaces every `get_attr` node that reads an attribute an earlier node already reads by that
    earlier node. Returns how many nodes went."""
    first_reader = {}
    merged = 0
    for node in list(graph_module.graph.nodes):
        if node.op != "get_attr":
            continue
        reader = first_reader.setdefault(node.target, node)
        if reader is not node:
            node.replace_all_uses_with(reader)
            graph_module.graph.erase_node(node)
            merged += 1
    return merged


@contextlib.contextmanager
def shared_constant_reads_merged():
    """While active, Inductor's freezing (torch._inductor.freezing, whose own constant folding and
    freezing_patterns' look `constant_fold` up there) merges shared reads before each fold."""
    from torch._inductor import freezing

    original = freezing.constant_fold

    def constant_fold(graph_module, *args, **kwargs):
        merge_shared_constant_reads(graph_module)
        return original(graph_module, *args, **kwargs)

    freezing.constant_fold = constant_fold
    try:
        yield
    finally:
        freezing.constant_fold = original
