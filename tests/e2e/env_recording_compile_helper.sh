#!/bin/sh
# Stands in for the compile helper's Python (BENCHMATRIX_PYTHON) in test_backends' --cold-start test:
# appends the Inductor and Triton cache directories it was given to $COMPILE_ENV_LOG (one line per
# compile), then runs the real helper with $REAL_PYTHON.
echo "TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-unset} TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-unset}" >> "$COMPILE_ENV_LOG"
exec "$REAL_PYTHON" "$@"
