#!/bin/bash
# The any-model coverage bench on the GPU machine (issue 25, BENCHMARKS.md "Coverage of each suite"): which
# models of configs/huggingface_models_list.txt and timm_models_list.txt run from C++ as loaded
# TorchScript programs, eager eval and train and inductor eval, each with --verify. Steps, in order:
#   build     configure and build experiment_runner into build-gpu (bench/build_gpu.sh)
#   coverage  the chosen models in batches of BATCH (default 4; MODELS' order, or the lists' for
#             "all"); per batch:
#             1. prefetch: for each model, whether it can be built offline (its constructor
#                on the meta device), and its TorchScript programs built by python -m
#                benchmatrix_import, IMPORT_JOBS at a time, into the sweeps' cache
#                (bench/any_model_coverage.py): the eager sweeps' four (eval bfloat16, train
#                float32, each also float64 for the verifier) and the inductor sweep's eval
#                bfloat16, traced as torch.compile sees the model (--traced-for=compiler) and
#                exported by torch.export (--exported-program: what inductor compiles), with
#                the eager eval pair its verifier runs (an EAGER=0 call imports those too)
#             2. eager eval and train of the batch's models, huggingface then timm_models
#             3. inductor eval of the same (unless INDUCTOR=0), the packages compiled ahead
#                COMPILE_AHEAD at once
#             4. the batch's programs removed from the cache (KEEP_IMPORTS=1 keeps them): the whole
#                lists' programs do not fit the GPU machine's 64 GiB disk (H100, 2026-11-25: every import
#                after the disk filled died in torch.jit.save, status -6; 8 models at once with
#                BlenderbotForCausalLM, 2.5e9 parameters and about 55 GB of programs, filled it)
#             then the coverage table (model, suite, eager eval/train, inductor eval: PASS with the
#                median step time, FAIL with its verification code, SKIP with the YAML's reason,
#                ERROR with the record's error, NOT_RUN when the time budget ended first) and the
#                share of the buildable models that run and that PASS
# Usage: bench/any_model_gpu.sh OUT_DIR STEP...
#   MODELS=a,b   model names from either list, a suite's name for its whole list
#                ("huggingface,vit_base_patch16_siglip_256"), or "all" (default: two small models
#                of each list);
#   DEADLINE_S   seconds from the script's start after which no sweep or import goes on (default
#                510: a 9-minute device call with the table and copies after it; a build in the
#                same call comes out of it);
#   IMPORT_JOBS  import processes at once, one per model; a batch of fewer models splits each
#                model's programs over IMPORT_JOBS / models processes (default 8; each holds a
#                CUDA context and its model, and in host memory its float64 copy: 14 at once
#                took an H100 machine down on 2026-11-25);
#   PREFETCH_S   seconds a batch's prefetch may take (default 150); imports not done by then are left to
#                the sweeps' children, which import one at a time;
#   REPEAT       timed repeats per config (default 3);
#   VERIFY_ARGS  more verifier flags (default --verify-deterministic, PyTorch's accuracy harness's
#                determinism; the first H100 run (2026-11-25), without it, found every BERT-like train config
#                NONDETERMINISTIC_EAGER_RUN from CUDA's embedding backward; "" leaves it out);
#   FRESH=1      starts the coverage over (default: a call continues the last one's on a warm
#                machine: finished batches are not run again, the runner resumes its results
#                files, the prefetch skips what it imported before);
#   INDUCTOR=0   leaves the inductor sweeps out (its column says "-"): eager breadth in one call;
#   EAGER=0      leaves the eager sweeps out: the inductor column of models whose eager columns an
#                earlier call ran (`any_model_coverage.py table` merges the calls cell by cell);
#   DEVICES      the runner's --devices (e.g. all): one child per GPU at a time, the imports
#                spread over the same GPUs; on a several-GPU machine (nvidia-h200-x4: DEVICES=all
#                BATCH=8, 235 GB of disk) the lists' eager coverage takes about a quarter of the
#                one-GPU time, which was about 50 minutes on an H100 (2026-11-25). Step times of
#                children running beside each other share the host: coverage, not timing;
#   CHILD_TIMEOUT_S  seconds per child (default 300; an inductor compile of a large model is long);
#   COMPILE_AHEAD  the inductor sweeps' --compile-ahead: packages compiled this many at once before
#                the suite's timed children (default 4; the runner retries alone a compile that
#                ran out of memory beside others; 0 compiles in each child);
#   CONFIG_DIR   the lists and YAMLs (default configs; tests/e2e/fixtures/imported_configs holds
#                reduced models) and ACCELERATOR (default cuda; cpu, with BUILD_DIR=build and those
#                reduced models, runs this script on a machine without a GPU).
# Nothing is downloaded: the helper builds from transformers' default configs and
# timm.create_model(pretrained=False); HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE make any hub access fail
# at once instead of waiting on the network the machine does not have (models whose configs are hub
# downloads are SKIPs of configs/huggingface.yaml, and "not buildable offline" in the table).
# Work (results, import and compile caches) stays in WORK (default /tmp/any_model; the caches are
# reused by the next call on a warm machine); only summaries go to OUT_DIR: coverage.txt,
# coverage.jsonl (one line per model; `python3 bench/any_model_coverage.py table A B ...` merges
# several calls' files), prefetch.txt, sweeps.log (the runners' log tails), records.jsonl (the
# records, errors cut to 2000 characters) and build_gpu.sh's logs.
set -euo pipefail
started=$(date +%s)
out=$1; shift
mkdir -p "$out"
build=${BUILD_DIR:-build-gpu}
work=${WORK:-/tmp/any_model}
config_dir=${CONFIG_DIR:-configs}
accelerator=${ACCELERATOR:-cuda}
small_models=BertForMaskedLM,GPT2ForSequenceClassification,mobilenetv2_100
models=${MODELS:-$small_models,deit_tiny_patch16_224.fb_in1k}
deadline=$((started + ${DEADLINE_S:-510}))
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export BENCHMATRIX_CONFIG_DIR="$PWD/$config_dir"  # the runner's lists and YAMLs, as the script's
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
coverage() { python3 bench/any_model_coverage.py "$@"; }

# The chosen models of one suite as an anchored --filter (regex metacharacters escaped: timm names
# hold dots); empty when the suite has none of them.
suite_filter() {
  python3 - "$1" "$models" "$config_dir" <<'PY'
import re, sys
sys.path.insert(0, "bench")
from any_model_coverage import chosen_models
names = [m for s, m, _ in chosen_models(sys.argv[3], sys.argv[2]) if s == sys.argv[1]]
if names:
    print("^(" + "|".join(re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", n) for n in names) + ")$")
PY
}

# experiment_runner over SUITE's chosen models with the given axes, stopped (SIGINT: it ends its
# children and keeps the records written) when the deadline comes; resumes its results file.
sweep() {
  local suite=$1; shift
  local filter; filter=$(suite_filter "$suite")
  local left=$((deadline - $(date +%s)))
  [ -n "$filter" ] || return 0
  if [ "$left" -le 5 ]; then echo "$suite $*: not started (time budget)"; stopped=1; return 0; fi
  echo "--- $suite $* ($left s left)"
  timeout --signal=INT --kill-after=30 "$left" "$build/experiment_runner" \
    --suite-name="$suite" --filter="$filter" --accelerator="$accelerator" --xla=None "$@" \
    --repeat="${REPEAT:-3}" --verify ${VERIFY_ARGS---verify-deterministic} --no-memory-pass \
    --subprocess-timeout="${CHILD_TIMEOUT_S:-300}" ${DEVICES:+--devices="$DEVICES"} \
    --cache-dir="$work/cache" --output-dirname="$work/run/$suite" \
    >> "$work/run/$suite.log" 2>&1 || {
      local status=$?
      echo "$suite $*: runner exit $status (see sweeps.log)"
      # 124: the deadline's SIGINT (the rest of its configs resume in the next call)
      [ "$status" != 124 ] || stopped=1
    }
}

for step in "$@"; do
  echo "=== $step $(date +%T)"
  case $step in
    build)
      BUILD_DIR="$build" bench/build_gpu.sh "$out" experiment_runner
      ;;
    coverage)
      # A call continues the last one's coverage on a warm machine (the runner resumes its results
      # files, a finished batch is not run again, the prefetch skips what it imported before);
      # FRESH=1 starts over.
      [ "${FRESH:-0}" = 0 ] || rm -rf "$work/run"
      mkdir -p "$work/run" "$work/cache"
      all_models=$models
      gpus=""  # the GPUs the prefetch spreads its imports over (DEVICES's)
      if [ -n "${DEVICES:-}" ]; then
        if [ "$DEVICES" = all ]; then
          gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
        else
          gpus=$DEVICES
        fi
      fi
      n=0
      while read -r -u 3 batch; do
        n=$((n + 1))
        [ ! -f "$work/run/batch-$n.done" ] || continue
        if [ $((deadline - $(date +%s))) -le 5 ]; then echo "batch $n: not started (time budget)"; continue; fi
        models=$batch  # suite_filter's
        echo "--- batch $n: $batch (disk free $(df -h --output=avail "$work" | tail -1 | tr -d ' '))"
        prefetch_deadline=$(( $(date +%s) + ${PREFETCH_S:-150} ))
        [ "$prefetch_deadline" -le "$deadline" ] || prefetch_deadline=$deadline
        sweeps=()  # the programs of the sweeps asked for
        [ "${EAGER:-1}" = 0 ] || sweeps+=(--sweep=eager)
        [ "${INDUCTOR:-1}" = 0 ] || sweeps+=(--sweep=inductor)
        coverage prefetch --config-dir="$config_dir" --models="$batch" --device="$accelerator" \
          "${sweeps[@]}" \
          --cache-dir="$work/cache/imported" --jobs="${IMPORT_JOBS:-8}" --gpus="$gpus" \
          --deadline="$prefetch_deadline" --out="$work/run/prefetch-$n.jsonl" \
          >> "$out/prefetch.txt" 2>&1 || { echo "prefetch failed:"; tail -20 "$out/prefetch.txt"; }
        stopped=0
        # the imports are done ahead: no compile service for the eager sweeps (an import the
        # prefetch left runs as a helper process of its child)
        if [ "${EAGER:-1}" != 0 ]; then
          for suite in huggingface timm_models; do
            sweep $suite --dynamo=None --test=eval --test=train --no-compile-service
          done
        fi
        if [ "${INDUCTOR:-1}" != 0 ]; then
          for suite in huggingface timm_models; do
            sweep $suite --dynamo=inductor --test=eval --compile-ahead="${COMPILE_AHEAD:-4}"
          done
        fi
        if [ "$stopped" = 0 ]; then
          # the batch's programs out of the cache (KEEP_IMPORTS=1 keeps them): see batches
          [ "${KEEP_IMPORTS:-0}" = 1 ] || rm -rf "$work/cache/imported"
          touch "$work/run/batch-$n.done"
        fi
      done 3< <(coverage batches --config-dir="$config_dir" --models="$all_models" \
                 --size="${BATCH:-4}")
      models=$all_models
      not_asked=()
      [ "${INDUCTOR:-1}" != 0 ] || not_asked+=(--not-asked=inductor_eval)
      [ "${EAGER:-1}" != 0 ] || not_asked+=(--not-asked=eager_eval --not-asked=eager_train)
      prefetched=()
      for f in "$work"/run/prefetch-*.jsonl; do [ ! -f "$f" ] || prefetched+=(--prefetch="$f"); done
      results=$(ls "$work"/run/*/results.jsonl 2>/dev/null || true)
      coverage summarize --config-dir="$config_dir" --models="$models" \
        "${prefetched[@]}" --out="$out/coverage.jsonl" "${not_asked[@]}" $results
      coverage table "$out/coverage.jsonl" | tee "$out/coverage.txt"
      # the records, errors cut to 2000 characters (their telling lines are in the table)
      for r in $results; do
        python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line); e = r["metrics"].get("error")
    if isinstance(e, str): r["metrics"]["error"] = e[:2000]
    print(json.dumps(r))' "$r"
      done > "$out/records.jsonl"
      for log in "$work"/run/*.log; do echo "##### $log"; tail -40 "$log"; done > "$out/sweeps.log"
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
echo "=== done $(date +%T) ($(( $(date +%s) - started )) s)"
