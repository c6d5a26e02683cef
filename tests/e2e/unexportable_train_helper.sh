#!/bin/sh
# Stands in for the compile helper's Python (BENCHMATRIX_PYTHON) in test_backends: a --train
# compile whose export fails on the model's forward, as python/benchmatrix_compile/train_step.py
# reports it (status 4, the reason on its last line).
echo "Traceback (most recent call last):" >&2
echo "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard" >&2
echo "benchmatrix_compile: the train step cannot be exported: GuardOnDataDependentSymNode:" \
     "Could not guard on data-dependent expression Eq(u0, 1)" >&2
exit 4
