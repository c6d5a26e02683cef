#!/bin/sh
# Stands in for the compile helper's Python (BENCHMATRIX_PYTHON) in test_backends: fails the way a
# broken compile does, with a traceback on stderr.
echo "Traceback (most recent call last):" >&2
echo "torch._inductor.exc.InductorError: simulated compile failure" >&2
exit 1
