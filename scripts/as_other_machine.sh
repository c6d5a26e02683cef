#!/usr/bin/env bash
# Runs a command as if on another machine: in its own mount and UTS namespaces, where
# /proc/cpuinfo names another CPU model and the hostname is another host. Everything else (the
# CPUs, their flags, the files) is this machine's. experiment_runner names the CPU it runs on from
# lscpu, which reads /proc/cpuinfo: records written inside say accelerator_model "<OTHER_CPU>".
#
# What it is for (issue 48): tests must hold on any machine, whatever CPU the recorded fixtures
# (tests/e2e/fixtures/nights: "AMD EPYC") or the build machine have. `make test` runs the
# regression gate's tests through it, so they always run on a machine other than the fixtures'.
#
#   scripts/as_other_machine.sh [--fallback] COMMAND [ARGS...]
#   scripts/as_other_machine.sh make test             # the whole suite as another machine
#
# The command sees BENCHMATRIX_TEST_MACHINE="cpu:<OTHER_CPU>" (what experiment_runner will call
# this machine), so a test can check that the namespace took. Namespaces need root or
# unprivileged user namespaces (then it maps the caller to root inside). Without either it exits 2
# naming why, or with --fallback runs the command here as it is, with a note on stderr.
# Environment: OTHER_CPU (default "Benchmatrix Other CPU @ 1.00GHz"), OTHER_HOST (default
# "benchmatrix-other-host").
set -euo pipefail

fallback=false
if [[ ${1:-} == --fallback ]]; then
  fallback=true
  shift
fi
if (($# == 0)); then
  echo "usage: $0 [--fallback] COMMAND [ARGS...]" >&2
  exit 2
fi

OTHER_CPU=${OTHER_CPU:-Benchmatrix Other CPU @ 1.00GHz}
OTHER_HOST=${OTHER_HOST:-benchmatrix-other-host}

if [[ ${BENCHMATRIX_AS_OTHER_MACHINE_INSIDE:-} == 1 ]]; then
  # Inside the namespaces: this machine's cpuinfo with every model name replaced (the flags lines
  # stay: Inductor's ISA checks read them), bind-mounted over /proc/cpuinfo.
  cpuinfo=$(mktemp "${TMPDIR:-/tmp}/other_cpuinfo.XXXXXX")
  sed -E "s/^(model name[[:space:]]*:).*/\1 $OTHER_CPU/" /proc/cpuinfo >"$cpuinfo"
  grep -q "^model name" "$cpuinfo" || printf 'model name\t: %s\n' "$OTHER_CPU" >>"$cpuinfo"
  mount --bind "$cpuinfo" /proc/cpuinfo
  rm -f "$cpuinfo"  # the mount keeps the file
  hostname "$OTHER_HOST"
  unset BENCHMATRIX_AS_OTHER_MACHINE_INSIDE
  export BENCHMATRIX_TEST_MACHINE="cpu:$OTHER_CPU"
  exec "$@"
fi

self=$(readlink -f "$0")
namespaces=(--mount --uts)
[[ $(id -u) -ne 0 ]] && namespaces=(--user --map-root-user "${namespaces[@]}")
if probe=$(unshare "${namespaces[@]}" true 2>&1); then
  export OTHER_CPU OTHER_HOST BENCHMATRIX_AS_OTHER_MACHINE_INSIDE=1
  exec unshare "${namespaces[@]}" "$self" "$@"
fi
reason="unshare ${namespaces[*]} failed: ${probe:-no message} (needs root or unprivileged user namespaces)"
if $fallback; then
  echo "note: $0: $reason; running on this machine as it is" >&2
  exec "$@"
fi
echo "$0: error: $reason" >&2
exit 2
