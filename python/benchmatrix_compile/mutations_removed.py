"""In-place ops a program need not run in place, made out-of-place before TS2EPConverter.

TS2EPConverter freezes the TorchScript module, and freezing's constant propagation folds every
computation that depends on no input into a tensor constant, up to the first in-place op on it.
The ExportedProgram then holds that in-place op on constants, which functionalization leaves alone
(constants are real tensors, not functional ones), and AOTAutograd refuses the graph: "aot_autograd
expected to have an entirely functional graph, but found aten.add_.Tensor(add_1,
_tensor_constant8)". transformers' T5 family has one: `relative_buckets += ...` in
_relative_position_bucket, computed from the sequence lengths only (MT5ForConditionalGeneration
failed to compile so on an H200 x2, 2026-11-28; the reduced model fails the same way on the CPU).

`remove_mutations(module)` runs TorchScript's RemoveMutation pass over every method of the module
and its submodules: an in-place op on a tensor that nothing else aliases (a fresh result, not an
input, parameter or buffer) becomes its out-of-place form, as functionalization would make it; a
mutation it cannot prove safe stays. The compile helper converts the module after it; the eager
program (the file the child runs) is not touched.
"""


def _in_place_ops(graph):
    """The graph's ATen in-place calls (aten::add_ and the like), nested blocks included."""
    count = 0
    for node in graph.nodes():
        for block in node.blocks():
            count += _in_place_ops(block)
        kind = node.kind()
        if kind.startswith("aten::") and kind.endswith("_") and not kind.endswith("__"):
            count += 1
    return count


def remove_mutations(module):
    """Makes the in-place ops of every method of `module` (a torch.jit.ScriptModule) and its
    submodules out-of-place where TorchScript proves it safe. Returns how many went."""
    import torch

    removed = 0
    for _, submodule in module.named_modules():
        for name in submodule._c._method_names():
            graph = submodule._c._get_method(name).graph
            before = _in_place_ops(graph)
            torch._C._jit_pass_remove_mutation(graph)
            removed += before - _in_place_ops(graph)
    return removed
