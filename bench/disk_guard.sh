#!/bin/bash
# Keeps a compile cache from filling its disk during a long GPU sweep (issue 49: the real
# TorchBench's imported programs, export packages and Inductor packages filled the GPU machine's
# 64 GB in 7 minutes, 2026-12-07, and the machine stopped answering). Every 10 s, while the cache's
# file system has less than LOW_GB free, removes the cache's entries least recently written
# (CACHE_DIR/KEY and CACHE_DIR/imported/KEY, untouched for 3 minutes: a config that needs one again
# rebuilds it) until HIGH_GB are free; Inductor's and Triton's own caches (compiler-caches/) stay.
# With nothing left to remove and under 3 GB free, interrupts the sweeps (SIGINT to every
# experiment_runner: they stop without losing a record, and resume next call).
# Usage: bench/disk_guard.sh CACHE_DIR [LOW_GB (12)] [HIGH_GB (20)] &   (runs until killed)
set -uo pipefail
dir=$1; low=${2:-12}; high=${3:-20}
free_gb() { df --output=avail -BG "$dir" | tail -1 | tr -dc 0-9; }
entries_oldest_first() {
  find "$dir" "$dir/imported" -mindepth 1 -maxdepth 1 -type d ! -name imported \
       ! -name compiler-caches -mmin +3 -printf '%T@ %p\n' 2>/dev/null | sort -n | cut -d' ' -f2-
}
while sleep 10; do
  [ -d "$dir" ] || continue
  [ "$(free_gb)" -lt "$low" ] || continue
  removed=0
  while read -r entry; do
    [ "$(free_gb)" -ge "$high" ] && break
    size=$(du -sh "$entry" 2>/dev/null | cut -f1)
    rm -rf "$entry" && removed=$((removed + 1)) && echo "disk_guard: removed $entry ($size)"
  done < <(entries_oldest_first)
  if [ "$removed" = 0 ] && [ "$(free_gb)" -lt 3 ]; then
    echo "disk_guard: $(free_gb) GB free and no cache entry to remove: interrupting the sweeps"
    pkill -INT -f experiment_runner
  fi
done
