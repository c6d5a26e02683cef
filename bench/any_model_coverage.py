"""Coverage of the huggingface and timm_models suites on the GPU machine (issue 25; run by
bench/any_model_gpu.sh). Commands (import-model and batches serve the GPU bench):

  prefetch   for each chosen model: can it be built offline (its constructor run on the meta
             device: no memory, no download; python -m benchmatrix_import's own build code), and,
             for those the sweep will run, its TorchScript programs built ahead by
             benchmatrix_import's main (one process per model, its programs split over several
             when a batch has fewer models than --jobs: import-model), --jobs processes at a
             time, into <cache-dir>/imported: those the CUDA sweep's children ask for (IMPORTS:
             the eager sweeps' eval bfloat16 and train float32 as timed, each also in float64
             for --verify's reference; the inductor sweep's eval bfloat16, traced as
             torch.compile sees the model, and its verifier's eager eval pair), at the batch
             size the child resolves (the suite YAML's batch_size.<test> entry, else the
             list's). The children then hit the cache
             instead of building one at a time. Writes a JSON object per model (one per line).
  summarize  joins the prefetch file and the sweeps' results.jsonl files into one line per model:
             suite, buildable (and why not), and per column (eager eval, eager train, inductor eval)
             status PASS, FAIL (a verification code other than PASS), ERROR (no timing: the
             record's error), SKIP (the suite YAML's reason), NOT_RUN (no record: the time budget
             ended first) or NOT_ASKED (a column --not-asked names), with the median per-iteration
             time and the error line that says what went wrong.
  table      prints the coverage table of one or more summarize outputs (a later line for the same
             model wins, so several device calls' files merge) and, per suite, the share of the
             buildable models that run (a timing record in all three columns) and that PASS.
"""

import argparse
import concurrent.futures
import glob
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SUITES = ("huggingface", "timm_models")
LIST_FILES = {"huggingface": "huggingface_models_list.txt", "timm_models": "timm_models_list.txt"}
COLUMNS = (("eager", "eval"), ("eager", "train"), ("inductor", "eval"))
# (traced_for, test, dtype) of the programs a sweep's children import, per sweep
# (suites/precision_rule: eval casts to bfloat16, train keeps float32, under autocast on CUDA; the
# verifier's reference is float64). benchmatrix_import --traced-for: eager, the program as eager
# Python runs the model; compiler, as torch.compile sees it (with the attention masks transformers
# builds under a tracer). An inductor child compiles the compiler program's torch.export package
# (benchmatrix_import --exported-program, asked for with every compiler eval program); its verifier
# (worker/verify_child.cpp) runs the eager baseline, its rerun and the float64 reference with the
# dynamo axis reset, from the eager programs: without those here, each huggingface inductor
# config's verifier imported two programs itself (H200 x2, 2026-11-28: 19-36 s each, about 40 s a config).
IMPORTS = {"eager": (("eager", "eval", "bfloat16"), ("eager", "eval", "float64"),
                     ("eager", "train", "float32"), ("eager", "train", "float64")),
           "inductor": (("compiler", "eval", "bfloat16"), ("eager", "eval", "bfloat16"),
                        ("eager", "eval", "float64"))}


def read_list(config_dir, suite):
    """{model: batch size} in the list's order: 'Name,batch' (huggingface), 'name batch' (timm)."""
    separator = "," if suite == "huggingface" else None
    models = {}
    with open(os.path.join(config_dir, LIST_FILES[suite])) as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            name, batch = line.strip().rsplit(separator, 1) if separator else line.split()
            models[name.strip()] = int(batch)
    return models


def read_yaml(config_dir, suite):
    import yaml

    path = os.path.join(config_dir, f"{suite}.yaml")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return yaml.safe_load(f) or {}


def skip_all_reasons(config_dir, suite):
    """{model: the comment above its skip.all entry} of <suite>.yaml: the YAML says why there."""
    path = os.path.join(config_dir, f"{suite}.yaml")
    reasons, comment, in_all, last_was_entry = {}, [], False, False
    if not os.path.exists(path):
        return reasons
    with open(path) as f:
        for line in f:
            stripped = line.strip()
            if re.match(r"^\s+all:\s*$", line):
                in_all, comment = True, []
            elif in_all and stripped.startswith("#"):
                if last_was_entry:
                    comment = []
                comment.append(stripped.lstrip("# "))
                last_was_entry = False
            elif in_all and stripped.startswith("- "):
                reasons[stripped[2:].strip()] = " ".join(comment)
                last_was_entry = True
            elif in_all and stripped:
                in_all = False
    return reasons


def chosen_models(config_dir, names):
    """[(suite, model, list batch)] for names: 'all' in the lists' order (huggingface, then
    timm_models), comma-separated names in the order given (batches run in it, so a call that
    runs out of time has run the names given first; an H200 call of 2026-11-28 gave timm's first and got none,
    the lists' order putting huggingface's ahead); a suite's name among them stands for its whole
    list ("huggingface,vit_base_patch16_siglip_256")."""
    lists = {suite: read_list(config_dir, suite) for suite in SUITES}
    if names.strip() == "all":
        return [(s, m, b) for s in SUITES for m, b in lists[s].items()]
    wanted = []
    for n in (n.strip() for n in names.split(",")):
        wanted += list(lists[n]) if n in lists else [n] if n else []
    unknown = [n for n in wanted if not any(n in lists[s] for s in SUITES)]
    if unknown:
        sys.exit(f"any_model_coverage: {', '.join(unknown)} in neither "
                 f"{config_dir}/huggingface_models_list.txt nor timm_models_list.txt")
    suite_of = {m: s for s in SUITES for m in lists[s]}
    return [(suite_of[m], m, lists[suite_of[m]][m]) for m in dict.fromkeys(wanted)]


def batch_size(yaml_config, model, test, list_batch):
    key = "training" if test == "train" else "inference"
    return ((yaml_config.get("batch_size") or {}).get(key) or {}).get(model, list_batch)


def skipped_on_cuda(yaml_config, model):
    skip = yaml_config.get("skip") or {}
    on_cuda = (skip.get("device") or {}).get("cuda") or []
    return model in (skip.get("all") or []) or model in on_cuda


def overrides_file(config_dir, suite):
    """The per-model config keywords the child passes to the helper (suites/imported), if any."""
    path = os.path.join(config_dir, f"{suite}_model_overrides.yaml")
    return path if os.path.exists(path) else None


def buildable_offline(suite, model, overrides):
    """(True, "") or (False, why): the helper's constructor on the meta device, no network."""
    import torch
    from benchmatrix_import.__main__ import (Unbuildable, build_huggingface, build_timm,
                                             model_overrides)

    build = build_huggingface if suite == "huggingface" else build_timm
    try:
        with torch.device("meta"):
            build(model, 1, "meta", model_overrides(overrides, model))
        return True, ""
    except Unbuildable as e:
        return False, str(e)
    except Exception as e:  # built by the sweep anyway; its record says what fails
        return True, f"meta-device build failed ({type(e).__name__}: {str(e)[:200]})"


def helper_failure(stderr):
    """The line of a failed import's stderr that says why: the helper's own last line (3: not
    buildable offline), or, where a C++ error ended the process (status -6, c10's backtrace
    after it: e.g. torch.jit.save's writer on a full disk), the error's own line, not the
    backtrace's last frame."""
    lines = [line.strip() for line in stderr.splitlines()
             if line.strip() and not line.lstrip().startswith("frame #")]
    for i, line in enumerate(lines):
        if line.startswith("terminate called") or "c10::Error" in line:
            return " ".join(lines[i:i + 3])
    return lines[-1] if lines else ""


def batches(args):
    """The chosen models in groups of --size, one comma-separated line per group, in
    chosen_models' order: the GPU bench imports, runs and then removes one group's programs at a
    time, because the whole lists' programs (five per model, two in float64) do not fit a 64 GiB
    disk."""
    names = [model for _, model, _ in chosen_models(args.config_dir, args.models)]
    for start in range(0, len(names), args.size):
        print(",".join(names[start:start + args.size]))


def import_model(args):
    """Builds one model's programs in this process, one after another, through the helper's own
    main (python -m benchmatrix_import's, argv as the C++ child passes it): one JSON line per
    program on stdout with its outcome and seconds. A Python error ends only its program; a C++
    abort ends the process (the prefetch reports the programs left with its stderr)."""
    import gc

    import torch
    from benchmatrix_import.__main__ import run as run_import

    for argv in json.loads(args.programs):
        started = time.time()
        try:
            status, why = run_import(argv)
            outcome = "ok" if status == 0 else f"exit {status}: {why}".rstrip(": ")
        except Exception as e:  # the program's error, as the helper's last stderr line says it
            first = (str(e).strip().splitlines() or [""])[0]
            outcome = f"exit 1: {type(e).__name__}: {first}"
        print(json.dumps({"outcome": outcome, "seconds": round(time.time() - started, 1)}),
              flush=True)
        gc.collect()  # this program's model and its device memory, before the next one
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def process_groups(per_model, jobs):
    """The import processes for per_model (each model's programs, in order): one per model, or,
    when there are fewer models than jobs, each model's programs dealt round-robin over
    jobs // models processes. A process pays torch's and transformers' import once (about 10 s)
    and builds its programs one after another: GPT-Neo's (1.3e9 parameters) took 22-36 s each
    on an H200 (2026-11-28), so a batch of that one model would wait about 2.5 minutes for its five in one
    process; in two, its float64 programs are built beside the others."""
    share = max(1, jobs // max(1, len(per_model)))
    groups = []
    for programs in per_model:
        ways = min(share, len(programs))
        groups += [programs[i::ways] for i in range(ways)]
    return groups


def prefetch(args):
    deadline = args.deadline or float("inf")
    models = chosen_models(args.config_dir, args.models)
    yamls = {suite: read_yaml(args.config_dir, suite) for suite in SUITES}
    import torch

    torch_version = torch.__version__.split("+")[0]
    rows, jobs = {}, []
    for suite, model, list_batch in models:
        ok, why = buildable_offline(suite, model, overrides_file(args.config_dir, suite))
        rows[(suite, model)] = {"suite": suite, "model": model, "buildable": ok, "build_note": why,
                                "imports": []}
        if not ok or skipped_on_cuda(yamls[suite], model):
            continue
        programs = dict.fromkeys(program for sweep in args.sweep or list(IMPORTS)
                                 for program in IMPORTS[sweep])  # both sweeps: once each
        for traced_for, test, dtype in programs:
            jobs.append((suite, model, test, dtype,
                         batch_size(yamls[suite], model, test, list_batch), traced_for))
    os.makedirs(args.cache_dir, exist_ok=True)
    # An earlier call's imports (this script's --out, rewritten at the end of every call): those
    # that succeeded are in the cache, so a call that continues the coverage step does not pay a
    # helper's start (10-20 s each) to find them there again.
    done_before = {}
    if os.path.exists(args.out):
        for line in open(args.out):
            row = json.loads(line)
            for imp in row.get("imports", []):
                if imp["outcome"].startswith("ok"):
                    done_before[(row["suite"], row["model"], imp["test"], imp["dtype"],
                                 imp["batch_size"], imp.get("traced_for", "eager"))] = imp

    def helper_argv(job, result):
        suite, model, test, dtype, batch, traced_for = job
        argv = ["--suite", suite, "--model", model, "--batch-size", str(batch), "--test", test,
                "--device", args.device, "--dtype", dtype, "--traced-for", traced_for,
                "--cache-dir", args.cache_dir,
                "--expect-torch-version", torch_version, "--result", result]
        if overrides_file(args.config_dir, suite):
            argv += ["--overrides", overrides_file(args.config_dir, suite)]
        if traced_for == "compiler" and test == "eval":  # as the inductor child asks for it
            argv.append("--exported-program")
        return argv

    def run(model_jobs):
        """One model's programs in one process (import-model), one after another: a helper
        process per program paid the torch and transformers import (about 10 of each import's
        20-30 s on the H100) for each program. Returns [(job, outcome, seconds)]."""
        todo = [job for job in model_jobs if job not in done_before]
        results = [(job, "ok (an earlier call)", done_before[job]["seconds"])
                   for job in model_jobs if job in done_before]
        left = deadline - time.time()
        if not todo:
            return results
        if left < 10:
            return results + [(job, "not started (time budget)", 0.0) for job in todo]
        env = dict(os.environ)
        if args.gpus:  # spread over the machine's GPUs, one model's process on one
            env["CUDA_VISIBLE_DEVICES"] = args.gpus[next(placement) % len(args.gpus)]
        with tempfile.TemporaryDirectory(dir=args.cache_dir, prefix=".prefetch-") as scratch:
            programs = [helper_argv(job, os.path.join(scratch, f"result-{i}"))
                        for i, job in enumerate(todo)]
            command = [sys.executable, os.path.abspath(__file__), "import-model",
                       "--programs", json.dumps(programs)]
            started = time.time()
            try:
                proc = subprocess.run(command, capture_output=True, text=True, env=env,
                                      timeout=None if left == float("inf") else left)
                stdout, stderr, status = proc.stdout, proc.stderr, proc.returncode
            except subprocess.TimeoutExpired as e:
                stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                stderr, status = "", None
        reported = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
        for i, job in enumerate(todo):
            if i < len(reported):
                results.append((job, reported[i]["outcome"], reported[i]["seconds"]))
            elif status is None:
                results.append((job, "stopped (time budget)", time.time() - started))
            else:  # the process died before this program (a C++ abort: c10's error in stderr)
                results.append((job, f"exit {status}: {helper_failure(stderr)[:300]}",
                                time.time() - started))
        return results

    placement = itertools.count()  # next() is atomic under the GIL: the pool's threads share it
    by_model = {}
    for job in jobs:
        by_model.setdefault(job[:2], []).append(job)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for results in pool.map(run, process_groups(list(by_model.values()), args.jobs)):
            for (suite, model, test, dtype, batch, traced_for), outcome, seconds in results:
                rows[(suite, model)]["imports"].append(
                    {"test": test, "dtype": dtype, "batch_size": batch, "traced_for": traced_for,
                     "outcome": outcome, "seconds": round(seconds, 1)})
                print(f"{suite:12} {model:40} {test:5} {dtype:8} {traced_for:8} b={batch:<4} "
                      f"{seconds:6.1f}s {outcome}", flush=True)
    # An import stopped at the deadline leaves its staging directory (benchmatrix_import renames
    # it into place only when done): a float64 program of a large model is tens of GB, and the
    # GPU machine's disk is 64 GiB. No other import writes here while the prefetch runs.
    for staging in glob.glob(os.path.join(args.cache_dir, ".staging-*")):
        shutil.rmtree(staging, ignore_errors=True)
    with open(args.out, "w") as f:
        for row in rows.values():
            f.write(json.dumps(row) + "\n")


def error_reason(error):
    """The line of a record's error that says what went wrong (the child's stderr tail holds
    warnings and log lines too)."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    if not lines:
        return ""
    if lines[0].startswith(("out of device memory", "SKIP")):
        return lines[0]
    for i, line in enumerate(lines):
        if "experiment_runner: error:" in line:
            said = line.split("experiment_runner: error:", 1)[1].strip()
            # "...the import helper ... exited with status 1 for huggingface/X:" then its output:
            # the output's last line is the cause
            return f"{said} {lines[-1]}" if said.endswith(":") and i + 1 < len(lines) else said
    for line in reversed(lines):
        if re.match(r"^(\w+\.)*\w*(Error|Exception)\b", line):
            return line
    return lines[0]


def median_ms(record):
    times = record["metrics"].get("per_iter_time") or []
    counted = times[1:] if len(times) > 1 else times
    return round(statistics.median(counted) * 1e3, 3) if counted else None


def cell(record, skip_reasons):
    if record is None:
        return {"status": "NOT_RUN", "reason": "time budget ended first (no record)"}
    error = record["metrics"].get("error")
    if isinstance(error, str) and error.startswith("SKIP"):
        # "SKIP: model is in skip.all of <yaml>" -> "skip.all: <the YAML's comment above it>"
        where = re.sub(r"^SKIP:\s*(model is in )?", "", error.splitlines()[0])
        where = re.sub(r" of /\S+$", "", where)
        why = skip_reasons.get(record["model"]["model_name"]) if where == "skip.all" else None
        return {"status": "SKIP", "reason": where + (f": {why}" if why else "")}
    if error:
        return {"status": "ERROR", "code": record.get("verification_code"),
                "reason": error_reason(str(error))}
    code = record.get("verification_code")
    if code == "VERIFIER_SKIPPED":  # ran and timed; its YAML's accuracy.skip (PyTorch's too)
        return {"status": "UNVERIFIED", "code": code, "per_iter_ms": median_ms(record),
                "batch_size": record["experiment"]["batch_size"],
                "reason": (record.get("verification") or {}).get("message", "")}
    result = {"status": "PASS" if code == "PASS" else "FAIL", "code": code,
              "per_iter_ms": median_ms(record), "batch_size": record["experiment"]["batch_size"]}
    if code != "PASS":
        v = record.get("verification") or {}
        result["reason"] = error_reason(v["error"]) if "error" in v else (
            f"{code}: worst {v.get('worst_output')} rmse vs fp64 {v.get('rmse_vs_fp64')} "
            f"(eager {v.get('eager_rmse_vs_fp64')}), max abs {v.get('max_abs_error')}, "
            f"tolerance {v.get('tolerance')}")
    return result


def summarize(args):
    prefetched = {}
    for path in args.prefetch:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                prefetched[(row["suite"], row["model"])] = row
    records = {}
    for path in args.results:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                key = (r["model"]["suite_name"], r["model"]["model_name"],
                       r["experiment"]["dynamo"] or "eager", r["experiment"]["test"])
                records[key] = r
    reasons = {suite: skip_all_reasons(args.config_dir, suite) for suite in SUITES}
    with open(args.out, "w") as f:
        for suite, model, _ in chosen_models(args.config_dir, args.models):
            known = prefetched.get((suite, model), {})
            row = {"suite": suite, "model": model, "buildable": known.get("buildable"),
                   "build_note": known.get("build_note", "")}
            for backend, test in COLUMNS:
                column = f"{backend}_{test}"
                record = records.get((suite, model, backend, test))
                if column in args.not_asked:
                    row[column] = {"status": "NOT_ASKED"}
                elif record is None and model in reasons[suite]:
                    # the runner writes no record for a model its filter never reached; the
                    # YAML's skip.all is its answer all the same (not a gap in the time budget)
                    row[column] = {"status": "SKIP", "reason": f"skip.all: {reasons[suite][model]}"}
                else:
                    row[column] = cell(record, reasons[suite])
            f.write(json.dumps(row) + "\n")


def short(c, width):
    if c["status"] == "PASS":
        return f"PASS {c['per_iter_ms']:.2f} ms" if c.get("per_iter_ms") is not None else "PASS"
    if c["status"] == "FAIL":
        return f"FAIL {c.get('code')}"[:width]
    if c["status"] == "NOT_ASKED":
        return "-"
    return f"{c['status']} {c.get('reason', '')}"[:width]


def table(args):
    rows = {}
    for path in args.coverage:
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                earlier = rows.get((row["suite"], row["model"]))
                if earlier:  # cell by cell: a column the later call left out keeps its figure
                    for backend, test in COLUMNS:
                        column = f"{backend}_{test}"
                        later, before = row[column]["status"], earlier[column]["status"]
                        # a later NOT_RUN stays over an earlier NOT_ASKED: asked, not reached
                        if later == "NOT_ASKED" or (later == "NOT_RUN" and before != "NOT_ASKED"):
                            row[column] = earlier[column]
                    # a call whose prefetch did not check the model (null) keeps what one did
                    if row.get("buildable") is None and earlier.get("buildable") is not None:
                        row["buildable"] = earlier["buildable"]
                        row["build_note"] = earlier.get("build_note", "")
                rows[(row["suite"], row["model"])] = row
    # An older file's skip.all SKIP of a model the suite YAML skips no longer (GPT-Neo since
    # a1fee91) is a gap, not a reason: NOT_RUN until a call runs it.
    skipped_now = {suite: skip_all_reasons(args.config_dir, suite) for suite in SUITES}
    for (suite, model), row in rows.items():
        for backend, test in COLUMNS:
            c = row[f"{backend}_{test}"]
            if (c["status"] == "SKIP" and c.get("reason", "").startswith("skip.all:")
                    and model not in skipped_now[suite]):
                row[f"{backend}_{test}"] = {
                    "status": "NOT_RUN",
                    "reason": f"{args.config_dir}/{suite}.yaml skips it no longer; not run since"}
    width = 36
    header = f"{'model':40} {'suite':11} " + " ".join(
        f"{backend + ' ' + test:{width}}" for backend, test in COLUMNS)
    print(header)
    print("-" * len(header))
    details = []
    for (suite, model), row in sorted(rows.items()):
        cells = [row[f"{b}_{t}"] for b, t in COLUMNS]
        if row.get("buildable") is False:
            # no record because it cannot be built offline (older files said NOT_RUN there)
            cells = [{"status": "SKIP", "reason": "not buildable offline"}
                     if c["status"] == "NOT_RUN" else c for c in cells]
        print(f"{model[:40]:40} {suite:11} " +
              " ".join(f"{short(c, width):{width}}" for c in cells))
        if row.get("buildable") is False:
            details.append(f"{model}: not buildable offline: {row['build_note']}")
        said = set()
        for (b, t), c in zip(COLUMNS, cells):
            if (c["status"] in ("FAIL", "ERROR", "SKIP", "UNVERIFIED")
                    and c.get("reason") not in said and c.get("reason") != "not buildable offline"):
                said.add(c.get("reason"))
                details.append(f"{model} {b} {t}: {c['status']} {c.get('reason')}")
    if details:
        print("\nWhy (per model: each FAIL, ERROR or SKIP reason once, and what cannot be built "
              "offline):")
        for line in details:
            print("  " + line[:400])
    print("\nShare per suite (buildable: constructible offline; skipped: a SKIP of the suite YAML in "
          "every column asked for, PyTorch's own skip lists; runs: a timing record in every column "
          "asked for, of the buildable models not skipped; PASS: --verify PASS in every one):")
    for suite in SUITES:
        chosen = [row for (s, _), row in rows.items() if s == suite]
        if not chosen:
            continue
        buildable = [row for row in chosen if row.get("buildable") is not False]
        def asked(row):
            return [row[f"{b}_{t}"]["status"] for b, t in COLUMNS
                    if row[f"{b}_{t}"]["status"] != "NOT_ASKED"]
        skipped = [row for row in buildable
                   if asked(row) and all(status == "SKIP" for status in asked(row))]
        runnable = [row for row in buildable if row not in skipped]
        runs = [row for row in runnable
                if asked(row) and all(status in ("PASS", "FAIL", "UNVERIFIED")
                                      for status in asked(row))]
        passes = [row for row in runnable
                  if asked(row) and all(status == "PASS" for status in asked(row))]
        not_run = sum(row[f"{b}_{t}"]["status"] == "NOT_RUN"
                      for row in buildable for b, t in COLUMNS)

        def share(part, whole):
            return f"{len(part)}/{len(whole)}" + (
                f" ({100 * len(part) / len(whole):.0f}%)" if whole else "")
        unchecked = sum(row.get("buildable") is None for row in chosen)
        print(f"  {suite:11} chosen {len(chosen)}, buildable {len(buildable)}"
              + (f" ({unchecked} not checked: no prefetch chose them)" if unchecked else "")
              + f", skipped {len(skipped)}, runs {share(runs, runnable)} of those not skipped, "
              f"{share(runs, buildable)} of the buildable; PASS {share(passes, runnable)}"
              + (f"; {not_run} configs not run" if not_run else ""))
        # Per column, over the same models: a column no call asked for counts as not run here.
        for b, t in COLUMNS:
            statuses = [row[f"{b}_{t}"]["status"] for row in runnable]
            ran = sum(status in ("PASS", "FAIL", "UNVERIFIED") for status in statuses)
            print(f"    {b} {t}: ran {ran}/{len(runnable)}, PASS "
                  f"{statuses.count('PASS')}, FAIL {statuses.count('FAIL')}, UNVERIFIED "
                  f"{statuses.count('UNVERIFIED')}, ERROR {statuses.count('ERROR')}, not run "
                  f"{statuses.count('NOT_RUN')}, not asked {statuses.count('NOT_ASKED')}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("prefetch")
    p.add_argument("--config-dir", required=True)
    p.add_argument("--models", required=True, help="'all' or comma-separated model names")
    p.add_argument("--cache-dir", required=True, help="<sweep --cache-dir>/imported")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                   help="the sweep's accelerator (the programs are traced on it)")
    p.add_argument("--jobs", type=int, default=8)
    p.add_argument("--gpus", type=lambda text: [g for g in text.split(",") if g], default=[],
                   help="comma-separated GPU indices the imports are spread over (default: "
                        "the environment's)")
    p.add_argument("--deadline", type=float, default=0,
                   help="seconds since the epoch: imports not done by then are stopped")
    p.add_argument("--sweep", action="append", choices=list(IMPORTS), default=[],
                   help="whose programs: eager (the eager eval and train sweeps') and/or "
                        "inductor (the inductor eval sweep's and its verifier's); repeatable "
                        "(default: both)")
    p.add_argument("--out", required=True)
    i = commands.add_parser("import-model", help="(the prefetch's) one model's programs")
    i.add_argument("--programs", required=True,
                   help="JSON list of benchmatrix_import argument lists")
    g = commands.add_parser("batches", help="the chosen models in groups, one line per group")
    g.add_argument("--config-dir", required=True)
    g.add_argument("--models", required=True)
    g.add_argument("--size", type=int, default=6)
    s = commands.add_parser("summarize")
    s.add_argument("--config-dir", required=True)
    s.add_argument("--models", required=True)
    s.add_argument("--prefetch", action="append", default=[],
                   help="prefetch outputs (one per batch of models)")
    s.add_argument("--out", required=True)
    s.add_argument("--not-asked", action="append", default=[],
                   choices=[f"{b}_{t}" for b, t in COLUMNS], help="a column the sweeps left out")
    s.add_argument("results", nargs="*", help="the sweeps' results.jsonl files")
    t = commands.add_parser("table")
    t.add_argument("--config-dir", default="configs",
                   help="the suite YAMLs whose skip.all the table holds older SKIPs against")
    t.add_argument("coverage", nargs="+",
                   help="summarize outputs; a later line's cell wins unless it is NOT_ASKED or "
                        "NOT_RUN (so calls that ran different columns merge)")
    args = parser.parse_args(argv)
    {"prefetch": prefetch, "import-model": import_model, "batches": batches,
     "summarize": summarize, "table": table}[args.command](args)


if __name__ == "__main__":
    main(sys.argv[1:])
