"""Keeps the tests' per-user compile cache (tests/e2e/harness.py SHARED_CACHE,
$XDG_CACHE_HOME/benchmatrix/test-compile-cache) from growing without bound on a machine that runs
`make test` again and again: every change to what keys a package (the compile helper's sources,
the traced graphs) leaves the old entries behind, a few GB a change (8.6 GB on the build machine
on 2026-12-06).

Run by `make test` before ctest. An entry (a folder named by its key, with its `.lock` beside it)
is removed when unused for --max-age-days (default 7), then the least recently used go until the
cache is under --max-gib (default 10). "Used" is the latest access or change time of the entry's
files (a hit reads its manifest; with Linux's relatime the access time moves at least daily).
Entries used within the last hour are never removed.

Usage: python3 tests/prune_test_cache.py [--cache DIR] [--max-age-days N] [--max-gib G]
"""
import argparse
import os
import shutil
import sys
import time

DEFAULT_CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                             "benchmatrix", "test-compile-cache")
RECENT_S = 3600  # an entry used this recently may belong to a run in progress


def entry_usage(path):
    """(last use in seconds since the epoch, bytes) of an entry folder."""
    last, size = os.stat(path).st_mtime, 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                info = os.stat(os.path.join(folder, name))
            except FileNotFoundError:
                continue
            last = max(last, info.st_atime, info.st_mtime)
            size += info.st_size
    return last, size


def remove_entry(path):
    shutil.rmtree(path, ignore_errors=True)
    try:
        os.unlink(path + ".lock")
    except FileNotFoundError:
        pass


def prune(cache, max_age_days, max_bytes, now=None):
    """Removes entries as the module says; returns (removed count, bytes freed, bytes kept)."""
    now = time.time() if now is None else now
    if not os.path.isdir(cache):
        return 0, 0, 0
    entries = []
    for name in os.listdir(cache):
        path = os.path.join(cache, name)
        if os.path.isdir(path):
            entries.append((path, *entry_usage(path)))
    entries.sort(key=lambda entry: entry[1])  # least recently used first
    kept = sum(size for _, _, size in entries)
    removed = freed = 0
    for path, last_use, size in entries:
        idle = now - last_use
        if idle < RECENT_S:
            continue
        if idle > max_age_days * 86400 or kept > max_bytes:
            remove_entry(path)
            removed += 1
            freed += size
            kept -= size
    return removed, freed, kept


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=DEFAULT_CACHE, help="default %(default)s")
    parser.add_argument("--max-age-days", type=float, default=7.0)
    parser.add_argument("--max-gib", type=float, default=10.0)
    args = parser.parse_args(argv)
    if args.max_age_days <= 0 or args.max_gib <= 0:
        parser.error("--max-age-days and --max-gib must be positive")
    removed, freed, kept = prune(args.cache, args.max_age_days, args.max_gib * 2**30)
    if removed:
        print(f"prune_test_cache: removed {removed} unused entries ({freed / 2**30:.1f} GiB) from "
              f"{args.cache}; {kept / 2**30:.1f} GiB kept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
