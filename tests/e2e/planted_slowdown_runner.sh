#!/usr/bin/env bash
# A stand-in for "tonight's build" in test_regression_gate: experiment_runner ($EXPERIMENT_RUNNER),
# except that a config of resnet18 or alexnet runs confined to ONE of this machine's CPUs, at nice 3,
# beside a busy loop pinned to the same CPU at nice 0. On one run queue the scheduler shares the
# CPU by weight (nice 3 weighs 526, nice 0 1024: two busy OpenMP threads of the runner get half of
# one core, one thread a third, against the baseline's whole machine), a rule rather than a race:
# a slowdown of those two models only, whatever the machine's core count, load balancer or thread
# settings. Any other config runs as it is. On the 2-core build machine (2026-12-06) the A/B rounds
# measured 1.8-9.2x at nice 0 and nice 5 (the planted configs SLOWER in every round, both nights);
# nice 3 lies between, the higher the nice the longer the test runs.
# History: busy loops on every core with the runner at nice 3 (no pinning) left the slowdown to the
# load balancer: in a fresh-clone CI run at 27f023c (2026-12-06) one A/B round of alexnet eager
# measured 3.37x, the next 1.21x, and the gate judged the planted config TOO_NOISY. (The recorded
# planted nights 9 and 10 ran those models under OMP_NUM_THREADS=1 taskset -c 0, the issue's
# recipe; on the build machine under a load of 13 that made them 2-7x faster, not slower.)
# Called as unplanted_runner.sh (a link to this file) it plants nothing: the baseline side of the
# A/B rounds, so that both builds start through the same bash and the same environment (with the
# baseline binary run directly, an untouched dcgan torchscript config measured 1.12-1.23x SLOWER
# on tonight's side in all three rounds of a fresh-clone CI run, 2026-12-06).
set -euo pipefail
runner=${EXPERIMENT_RUNNER:?EXPERIMENT_RUNNER must name experiment_runner}
case "${0##*/}:$*" in
  planted_slowdown_runner.sh:*'"model_name": "resnet18"'*) ;;
  planted_slowdown_runner.sh:*'"model_name": "alexnet"'*) ;;
  *) exec "$runner" "$@" ;;
esac
# The first CPU this process may run on ("0-1,4" -> 0): affinity may be narrower than nproc's.
allowed=$(taskset -c -p $$)
cpu=${allowed##*: }
cpu=${cpu%%[,-]*}
taskset -c "$cpu" bash -c 'while :; do :; done' &
spinner=$!
trap 'kill "$spinner" 2>/dev/null || true' EXIT
taskset -c "$cpu" nice -n 3 "$runner" "$@"
