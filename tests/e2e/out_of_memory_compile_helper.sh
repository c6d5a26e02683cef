#!/bin/sh
# Stands in for the compile helper's Python (BENCHMATRIX_PYTHON) in test_compile_ahead: appends the
# CPUs it was given to $COMPILE_CPU_LOG, then fails as a compile that ran out of device memory
# beside other compiles does.
echo "cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/$$/status)" >> "$COMPILE_CPU_LOG"
echo "Traceback (most recent call last):" >&2
echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB." >&2
exit 1
