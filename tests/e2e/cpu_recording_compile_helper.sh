#!/bin/sh
# Stands in for the compile helper's Python (BENCHMATRIX_PYTHON) in test_compile_ahead: appends the
# CPUs it may run on (its Cpus_allowed_list, inherited from the child that started it), the
# OMP_NUM_THREADS it inherited and the package it builds (its --output argument's directory name
# is the cache's staging directory) to $COMPILE_CPU_LOG, one line per compile, then runs the real
# helper with $REAL_PYTHON.
echo "cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/$$/status)" \
  "omp=${OMP_NUM_THREADS:-unset} args=$*" >> "$COMPILE_CPU_LOG"
exec "$REAL_PYTHON" "$@"
