#!/bin/bash
# The train-step bench on the GPU machine (issues 23 and 28, BENCHMARKS.md "Train step"). Steps, in
# order:
#   build   configure and build experiment_runner into build-gpu (as bench/compiled_backends_gpu.sh;
#           openxla needs the PJRT header: carry third_party_cache, as bench/xla_gpu.sh says)
#   verify  --verify of our eager and cudagraphs train step on CUDA; the cudagraphs records must
#           have no compile.capture_fallback (the whole step captured)
#   zoo     bench/train_step_anchor.py over the zoo: our eager, cudagraphs, inductor and openxla
#           train step against Python eager, torch.compile(step) and torch.compile(step,
#           mode="reduce-overhead") (pip originals, or our exported graph where there is none);
#           a warm-up phase first (every compile cache filled: ours by one experiment_runner
#           sweep with --compile-ahead=WARM_JOBS, then Python's two compiles per model, WARM_JOBS
#           at a time), then interleaved rounds, CUPTI GPU-busy in the last round. The tables on
#           stdout; in OUT_DIR trainzoo.table.md (markdown for BENCHMARKS.md), trainzoo.jsonl,
#           trainzoo.out/.log and trainzoo.tar.gz (timing/ = every model's result, warm-up and
#           round records). The work folder ZOO_DIR (default build-gpu/trainzoo: git-ignored, so
#           it stays on the machine between device calls) keeps the caches and what is done:
#           nothing runs past DEADLINE_S (default 540) seconds after this script started (the
#           build included), and the same command in the next call continues. PART=K/N runs the
#           K-th of N interleaved parts of the zoo (a machine goes back after 30 min held, and
#           the whole zoo does not fit one); `python3 bench/train_step_table.py DIR` renders the
#           parts' timing/ files, extracted together into DIR/timing, as one table. PHASE=warm
#           or PHASE=time runs one phase only (default both).
#           H200 x4 (16 cores a part), 2026-11-28: with the per-model warm-up of then (one
#           experiment_runner per model, --verify) and our packages compiled ahead, a part's
#           warm-up took 6-10 min and a model's timing about 1 min.
#   gpus:zoo  zoo on every GPU at once, one part of the zoo per GPU (below)
#   bench   the same script over MODELS (default resnet50,resnet18,mobilenet_v2), in one call (no
#           deadline; work folder build-gpu/trainbench, files in OUT_DIR named trainbench.*).
# Usage: bench/train_step_gpu.sh OUT_DIR STEP...
#   e.g. PART=1/2 bench/train_step_gpu.sh $OUT build zoo, then (same machine) PART=1/2
#   bench/train_step_gpu.sh $OUT zoo until the table has every model of the part; on a machine
#   of several GPUs, bench/train_step_gpu.sh /tmp/t build gpus:zoo, then gpus:zoo again.
#   MODELS=a,b the models (zoo: default every torchbench model); VARIANTS=a,b of ours_eager,
#   ours_cudagraphs, ours_inductor, ours_openxla, python_eager, python_compile,
#   python_reduce_overhead (default all); ROUNDS (2), WARM_JOBS (4), PART (1/1), DEADLINE_S,
#   ZOO_DIR as above; ANCHOR_ARGS passes more options to train_step_anchor.py (e.g. "--repeats 5
#   --iters 20", "--no-verify"); VERIFY_MODELS=regex the verified ones of `verify`.
#   DONE_DIR=folder: timing/<model>.json files of earlier calls (extracted from their
#   trainzoo.tar.gz into the working tree, e.g. bench/results/<date>_trainzoo/timing, and
#   carried): copied into the work folder first, so a fresh machine (one goes back after 30 min
#   held) times only the models still missing, and the table holds every call's models (each
#   model's row from one call).
set -euo pipefail
started=$(date +%s)  # DEADLINE_S counts from here (a device command's 600 s include the build)
out=$1; shift
mkdir -p "$out"
build=build-gpu
anchor() {  # anchor WORK_DIR OPTION...: the bench's tables on stdout, its log in OUT_DIR
  local work=$1; shift
  python3 bench/train_step_anchor.py "$build/experiment_runner" "$work" \
    ${VARIANTS:+--variants="$VARIANTS"} --rounds="${ROUNDS:-2}" \
    --warm-jobs="${WARM_JOBS:-4}" --part="${PART:-1/1}" --phase="${PHASE:-warm,time}" \
    ${ANCHOR_ARGS:-} "$@" \
    > "$out/$(basename "$work").out" 2> >(tee -a "$out/$(basename "$work").log" >&2) \
    || { echo "train_step_anchor.py failed"; exit 1; }
  grep -v '^{' "$out/$(basename "$work").out"
  cp "$work/table.md" "$out/$(basename "$work").table.md"
  [ ! -f "$work/results.jsonl" ] || cp "$work/results.jsonl" "$out/$(basename "$work").jsonl"
  tar -czf "$out/$(basename "$work").tar.gz" -C "$work" --exclude='*.log' \
    timing warm/python $(cd "$work" && ls -d warm/ours/*/results.jsonl runs/*/*/results.jsonl \
                         2>/dev/null || true)
}
for step in "$@"; do
  echo "=== $step $(date +%T)"
  case $step in
    gpus:zoo)
      # The zoo step on every GPU of the machine at once, so that the whole zoo fits one lease
      # of a several-GPU machine (issue 23's one-run table): part K of N (N = GPUS, default
      # every GPU nvidia-smi lists) runs on GPU K-1 and the K-th of N equal slices of the CPUs
      # (taskset), with its own work folder ZOO_DIR=build-gpu/trainzoo-gpuK and its output in
      # OUT_DIR/gpuK/. Every part's warm phase first, then, once all have ended, every part's
      # timing phase: no model is timed while another part compiles (that host load made
      # the H200 x4 records of 2026-11-28 noisy). The parts then share the host (memory bandwidth, PCIe),
      # not a GPU or a CPU; within a part each model's variants stay interleaved, so its ratios
      # stay paired. The parts' timing/ files are rendered as one table,
      # OUT_DIR/trainzoo-gpus.table.md, and the parts' outputs (with their warm-up and round
      # records) packed in trainzoo-gpus.tar.gz (a device call brings back only a few files
      # from $OUT: give an OUT_DIR outside it and copy these two).
      gpus=${GPUS:-$(nvidia-smi -L | wc -l)}
      slice=$(( $(nproc) / gpus ))
      [ "$slice" -ge 1 ] || { echo "GPUS=$gpus: more parts than CPUs ($(nproc))"; exit 2; }
      status=0
      for phase in warm time; do
        left=$(( ${DEADLINE_S:-540} - ($(date +%s) - started) ))
        for k in $(seq 1 "$gpus"); do
          first=$(( (k - 1) * slice ))
          CUDA_VISIBLE_DEVICES=$(( k - 1 )) PART=$k/$gpus ZOO_DIR=$build/trainzoo-gpu$k \
            PHASE=$phase DEADLINE_S=$left \
            taskset -c "$first-$(( first + slice - 1 ))" "$0" "$out/gpu$k" zoo \
            >> "$out/gpu$k.txt" 2>&1 &
        done
        for k in $(seq 1 "$gpus"); do wait -n || status=1; done
      done
      tail -n 4 "$out"/gpu*.txt
      merged=$build/trainzoo-gpus
      rm -rf "$merged" && mkdir -p "$merged/timing"
      cp "$build"/trainzoo-gpu*/timing/*.json "$merged/timing/" 2>/dev/null || true
      # the table's settings line: part 1's, saying that the N parts ran at once
      [ ! -f "$build/trainzoo-gpu1/meta.json" ] || python3 - "$build/trainzoo-gpu1/meta.json" \
        "$merged/meta.json" "$gpus" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))
parts = sys.argv[3]
meta["line"] = (meta["line"].replace(f"--part 1/{parts}", f"--part K/{parts}")
                + f" (parts 1-{parts} at once, part K on GPU K-1 and the K-th slice of the CPUs)")
json.dump(meta, open(sys.argv[2], "w"))
PY
      python3 bench/train_step_table.py "$merged"
      cp "$merged/table.md" "$out/trainzoo-gpus.table.md"
      tar -czf "$out/trainzoo-gpus.tar.gz" -C "$out" $(cd "$out" && ls -d gpu*)
      [ "$status" = 0 ] || { echo "$step: a part failed (OUT_DIR/gpuK.txt)"; exit 1; }
      ;;
    build)
      BUILD_DIR="$build" bench/build_gpu.sh "$out" experiment_runner
      ;;
    verify)
      models='^(resnet18|resnet50|hf_GPT2|mobilenet_v2|timm_vision_transformer|hf_Bert)$'
      "$build/experiment_runner" --suite-name=torchbench --accelerator=cuda --xla=None \
        --filter="${VERIFY_MODELS:-$models}" \
        --dynamo=None --dynamo=cudagraphs --test=train --repeat=2 --verify \
        --output-dirname="$out/verify" --no-resume > "$out/verify.log" 2>&1 || true
      python3 - "$out/verify/results.jsonl" <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    print(f"{r['model']['model_name']:24} {r['experiment']['dynamo'] or 'eager':10} "
          f"{r.get('verification_code')!s:24} fallback: "
          f"{r.get('compile', {}).get('capture_fallback', 'none')[:160]}")
PY
      ;;
    zoo)
      work=${ZOO_DIR:-$build/trainzoo}
      mkdir -p "$(dirname "$work")"
      if [ -n "${DONE_DIR:-}" ]; then  # models timed by earlier calls, on other machines
        [ -d "$DONE_DIR" ] || { echo "DONE_DIR=$DONE_DIR is not a folder"; exit 2; }
        mkdir -p "$work/timing"
        cp -n "$DONE_DIR"/*.json "$work/timing/" 2>/dev/null || true
        echo "zoo: $(ls "$DONE_DIR"/*.json 2>/dev/null | wc -l) models timed before (DONE_DIR)"
      fi
      left=$(( ${DEADLINE_S:-540} - ($(date +%s) - started) ))
      if [ "$left" -lt 120 ]; then
        echo "zoo: $left s left of DEADLINE_S=${DEADLINE_S:-540}: run the zoo step next call"
      else
        anchor "$work" --models="${MODELS:-zoo}" --deadline-s="$left"
      fi
      ;;
    bench)
      anchor "$build/trainbench" --models="${MODELS:-resnet50,resnet18,mobilenet_v2}"
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "=== done $(date +%T)"
