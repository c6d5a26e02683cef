#!/bin/sh
# Stands in for the compile helper's Python (BENCHMATRIX_PYTHON) in test_backends: a compile that
# never ends. It records its pid in $HANGING_HELPER_PID_FILE so the test can check it was stopped.
echo $$ > "$HANGING_HELPER_PID_FILE"
exec sleep 600
