#!/bin/sh
# Stands in for the compile helper's Python (BENCHMATRIX_PYTHON, with --no-compile-service) in
# test_xla_export's verifier test: copies the job file of the child that started it (its
# --job=<file> argument) to $JOB_COPY, so that the test can run that config's verifier child by
# hand, then runs the real helper with $REAL_PYTHON.
job=$(tr '\0' '\n' < "/proc/$PPID/cmdline" | sed -n 's/^--job=//p')
if [ -n "$job" ] && [ ! -e "$JOB_COPY" ]; then cp "$job" "$JOB_COPY"; fi
exec "$REAL_PYTHON" "$@"
