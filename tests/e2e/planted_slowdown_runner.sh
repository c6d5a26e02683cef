#!/usr/bin/env bash
# A stand-in for "tonight's build" in test_regression_gate: experiment_runner ($EXPERIMENT_RUNNER),
# except that while a config of resnet18 or alexnet runs, one busy loop per core competes with it
# for the CPU, the runner at nice 3 (a CFS weight of 526 against the loops' 1024: about a third
# of each core, a slowdown of those two models only, whatever the machine's thread settings).
# Any other config runs as it is. At equal priority (about 2x) a round of the eager configs
# measured 1.27x on the 2-core build machine (2026-12-06, a fresh-clone CI run) and the A/B
# rounds disagreed; the weights make the share the runner gets a scheduler rule, not a race.
# (The recorded planted nights 9 and 10 ran those models under OMP_NUM_THREADS=1 taskset -c 0, the
# issue's recipe; on the build machine under a load of 13 that made them 2-7x faster, not slower,
# so the confirmation test plants its slowdown this way instead.)
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
spinners=()
stop_spinners() { for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_spinners EXIT
for ((core = 0; core < $(nproc); ++core)); do
  (while :; do :; done) &
  spinners+=($!)
done
nice -n 3 "$runner" "$@"
