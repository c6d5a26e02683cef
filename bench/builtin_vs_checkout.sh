#!/bin/bash
# benchmatrix's 20 built-in C++ torchbench models against their originals in a TorchBench checkout
# (issue 49: "for each of the 20, the checkout's model and ours in one run: same parameter count,
# outputs within the verifier's tolerance on the same weights where that can be arranged, step
# time side by side").
# ROUNDS interleaved rounds (default 2; the order swaps every round, ABBA..., so that going second
# favours neither side); per round two experiment_runner sweeps of the same 20 names, eager, the
# TESTS given (default eval and train), REPEAT repeats (default 6, repeat 0 the warm-up), --verify:
#   builtin   --suite-name=torchbench with BENCHMATRIX_TORCHBENCH_DIR=none (the C++ ports)
#   checkout  --suite-name=torchbench --torchbench-dir=CHECKOUT --random-weights (the originals,
#             loaded as benchmatrix_import loads them: TorchScript programs)
# then OUT_DIR/table.md (bench/builtin_vs_checkout_table.py): per model and test, each side's batch
# size, parameter and buffer bytes (the records' memory pass), median per-iteration time over the
# rounds' counted repeats, the ratio, and the verification codes. The weights are each side's own
# random initialisation: the outputs are not compared with each other (each side's --verify
# compares it with its own eager and float64 runs).
# Usage: bench/builtin_vs_checkout.sh OUT_DIR
#   CHECKOUT=path (default .torchbench_checkout), ACCELERATOR=cpu|cuda (default cuda where
#   nvidia-smi lists a GPU), RUNNER=path (default build-gpu/experiment_runner, else
#   build/experiment_runner), BATCH=N: one batch size for both sides (default: each model's own),
#   ROUNDS, REPEAT, TESTS="eval train"
set -euo pipefail
out=$1
checkout=${CHECKOUT:-.torchbench_checkout}
rounds=${ROUNDS:-2}
repeat=${REPEAT:-6}
tests=${TESTS:-eval train}
if [ -z "${ACCELERATOR:-}" ]; then
  ACCELERATOR=cpu
  nvidia-smi -L > /dev/null 2>&1 && ACCELERATOR=cuda
fi
runner=${RUNNER:-build-gpu/experiment_runner}
[ -x "$runner" ] || runner=build/experiment_runner
[ -d "$checkout/torchbenchmark" ] || { echo "no TorchBench checkout at $checkout" >&2; exit 2; }
models='^(BERT_pytorch|LearningToPaint|alexnet|dcgan|densenet121|dlrm|hf_Bert|hf_GPT2|llama|mobilenet_v2|mobilenet_v3_large|nanogpt|resnet18|resnet50|shufflenet_v2_x1_0|speech_transformer|squeezenet1_1|timm_efficientnet|timm_vision_transformer|vgg16)$'
test_flags=()
for t in $tests; do test_flags+=("--test=$t"); done
batch_flags=()
[ -n "${BATCH:-}" ] && batch_flags=("--batch-size=$BATCH")
side() {  # side ROUND NAME: one sweep of one side into OUT_DIR/round-ROUND/NAME
  local dir="$out/round-$1/$2"
  local source=("--torchbench-dir=$checkout" --random-weights)
  [ "$2" = builtin ] && source=(--torchbench-dir=none)
  mkdir -p "$dir"
  "$runner" --suite-name=torchbench "${source[@]}" --accelerator="$ACCELERATOR" --xla=None \
    --dynamo=None "${test_flags[@]}" "${batch_flags[@]}" --repeat="$repeat" --verify -k "$models" \
    --output-dirname="$dir" --cache-dir="$out/cache" > "$dir/sweep.log" 2>&1 ||
    echo "$2 (round $1): experiment_runner exited $? (see $dir/sweep.log)"
}
for ((round = 1; round <= rounds; ++round)); do
  if (( round % 2 )); then side "$round" builtin; side "$round" checkout
  else side "$round" checkout; side "$round" builtin; fi
done
python3 "$(dirname "$0")/builtin_vs_checkout_table.py" "$out" > "$out/table.md"
cat "$out/table.md"
