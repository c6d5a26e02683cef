"""This user's cache of what compiles learn about the machine (not about a model): kept across
compile caches, since the runner's default --cache-dir is one per output directory."""

import os


def user_cache_directory(name):
    """$XDG_CACHE_HOME (default ~/.cache)/benchmatrix/<name>."""
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache_home, "benchmatrix", name)
