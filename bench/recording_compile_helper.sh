#!/bin/sh
# The compile helper's Python (BENCHMATRIX_PYTHON) as bench/train_step_anchor.py runs
# experiment_runner: writes the helper's command line, one argument a line, to helper_argv.txt in
# the directory it compiles into (the --out directory, or the directory of the --out file: a
# compile cache entry being built, which keeps the file), then runs the real helper with
# $TRAIN_STEP_BENCH_PYTHON. The bench reads the train step's --parameter-count, --loss-structure
# and --amp from there, to run the traced forward in Python as our compiled step does. The cache
# key does not depend on BENCHMATRIX_PYTHON, so entries built this way are ordinary entries.
out=
previous=
for argument in "$@"; do
  [ "$previous" = "--out" ] && out=$argument
  previous=$argument
done
if [ -n "$out" ]; then
  if [ -d "$out" ]; then directory=$out; else directory=$(dirname "$out"); fi
  printf '%s\n' "$@" > "$directory/helper_argv.txt"
fi
exec "$TRAIN_STEP_BENCH_PYTHON" "$@"
