"""Freezing's constant folding with a constant read by two nodes
(python/benchmatrix_compile/shared_constant_reads.py). What a user would notice: an inductor
compile that falls back to no freezing (slower to compile, a package without the folding) for
every program with such a pair. The graph below is that pair in small: `c` is read once by a
subgraph that folds away and once by the computation that stays."""
import os
import sys
import unittest

import torch
import torch.fx as fx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from benchmatrix_compile.shared_constant_reads import (  # noqa: E402
    merge_shared_constant_reads, shared_constant_reads_merged)

aten = torch.ops.aten


def graph_reading_a_constant_twice():
    """x * c + (c + 1): the reader of `c + 1` loses its user when that sum folds."""
    graph = fx.Graph()
    x = graph.placeholder("x")
    folded_reader = graph.get_attr("c")
    kept_reader = graph.get_attr("c")
    folded = graph.call_function(aten.add.Tensor, (folded_reader, 1))
    product = graph.call_function(aten.mul.Tensor, (x, kept_reader))
    graph.output(graph.call_function(aten.add.Tensor, (product, folded)))
    root = torch.nn.Module()
    root.register_buffer("c", torch.arange(4.0))
    return fx.GraphModule(root, graph)


class SharedConstantReads(unittest.TestCase):
    def test_inductors_fold_alone_deletes_a_constant_still_read(self):
        # The failure the merge exists for; if torch's constant_fold stops failing here, the
        # workaround in shared_constant_reads.py can go.
        from torch._inductor.constant_folding import constant_fold

        with self.assertRaisesRegex(RuntimeError, "references nonexistent attribute c"):
            constant_fold(graph_reading_a_constant_twice())

    def test_freezings_fold_keeps_the_constant_and_the_result(self):
        from torch._inductor import freezing

        module = graph_reading_a_constant_twice()
        x = torch.tensor([1.0, 2.0, 3.0, 4.0])
        expected = module(x)
        with shared_constant_reads_merged():
            freezing.constant_fold(module)
        self.assertTrue(torch.equal(module(x), expected))
        readers = [n for n in module.graph.nodes if n.op == "get_attr" and n.target == "c"]
        self.assertEqual(len(readers), 1)
        self.assertTrue(hasattr(module, "c"))

    def test_the_merge_leaves_freezing_as_it_was(self):
        from torch._inductor import freezing

        original = freezing.constant_fold
        with shared_constant_reads_merged():
            self.assertIsNot(freezing.constant_fold, original)
        self.assertIs(freezing.constant_fold, original)

    def test_distinct_constants_are_not_merged(self):
        module = graph_reading_a_constant_twice()
        module.register_buffer("d", torch.ones(4))
        d_reader = module.graph.get_attr("d")  # appended: a reader of another constant, unused
        self.assertEqual(merge_shared_constant_reads(module), 1)
        self.assertIn(d_reader, list(module.graph.nodes))


if __name__ == "__main__":
    unittest.main()
