"""The compile helper's on/off environment switches (BENCHMATRIX_HEADERS_AHEAD,
BENCHMATRIX_WEIGHTS_IN_LIBRARY, BENCHMATRIX_RUNTIME_APART): each is unset, 0 or 1, and any other
value stops the helper with status 2 (its status for bad arguments) and what was expected."""
import os
import sys


def switch(name, meanings):
    """NAME's value: None (unset), "0" or "1". `meanings` says what each means, for the refusal of
    another value: "0 (...), 1 (...) or unset (...)"."""
    setting = os.environ.get(name)
    if setting not in (None, "0", "1"):
        print(f"benchmatrix_compile: {name}={setting!r}: expected {meanings}", file=sys.stderr)
        raise SystemExit(2)
    return setting
