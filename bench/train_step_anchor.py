"""Train-step zoo bench (issues 23 and 28): our train step under eager, cudagraphs, inductor and
openxla against Python's eager and torch.compile (default and reduce-overhead) of the same step,
for every TorchBench model of our zoo, in one run.

Phases (--phase; both by default, then the tables):
  warm  Fills every compile cache before anything is timed. Our side in one experiment_runner
        sweep over the part's models (warm_ours_sweep): --compile-ahead=--warm-jobs compiles
        every inductor train package and openxla export and executable at once into the shared
        --cache-dir OUT_DIR/cache, then its one-step sweep (--repeat=1 --iterations-per-run=1,
        and --verify unless --no-verify) runs our eager, cudagraphs, inductor and openxla train
        configs, loading them. As each model's records land, a Python process
        (warm_python_job: bench/train_step_python.py --warm-only, --warm-jobs at a time) builds
        the model, torch.compiles the step (default, reduce-overhead) and runs it 3 times, with
        Inductor's and Triton's caches in OUT_DIR/caches/python-* (ours are in caches/ours-*:
        neither side's cold compile reuses the other's kernels). Those cold compile seconds are
        recorded: several compiles at once on a busy host, an upper bound of an idle cold
        compile. Triton's multi-config kernels are benchmarked there too, for both sides
        (AOTInductor bakes its choice into our package; Python's timing process reads its
        choice from the autotune cache). Nothing of the warm phase outlives --deadline-s.
  time  Models in groups of --warm-jobs: the group's Python processes start together and compile
        their steps (warm FX-graph and AOTAutograd cache hits: torch 2.11 has both caches on by
        default, torch._inductor.config.fx_graph_cache and
        torch._functorch.config.enable_autograd_cache; the seconds and hit counts are recorded),
        then each model in turn, --rounds times: one experiment_runner invocation times our
        backends (--xla=None --xla=PJRT --dynamo=None --dynamo=cudagraphs --dynamo=inductor
        --dynamo=openxla, one child each, packages from the warm cache; the lazy-tensor config
        xla=PJRT dynamo=None is a parent-side SKIP, ignored), then the model's Python process
        times its variants with CUDA events (interleaved rounds). The last round adds
        --profile-cupti: a pass after the timed repeats gives each backend's CUPTI GPU-busy time
        per iteration, and the memory pass each backend's peak device memory (the larger of the
        steps' and the CUDA graph capture's allocated peak); Python's peak is the timing
        process's warm-up peak of that variant (train_step_python.py). A variant whose warm-up record is a SKIP is not run again (its reason is
        the row's). A Python process is idle (blocked on its input) while experiment_runner
        runs; it holds its GPU memory, and the records' noise verdicts name it as another
        process on the GPU (the table's notes leave that reason out).
Models (--models zoo: every model of `experiment_runner --suite-name=torchbench --dry-run`) with a
pip original (anchor_steps: torchvision, timm, transformers) run it in Python; the others run our
exported graph (train_step_python.py says how), and the table marks which. A model that cannot
run a variant gets that variant's SKIP/error reason in its row, never a silent gap.

Output in OUT_DIR: timing/<model>.json per timed model (all variants' per-iteration ms, statuses,
reasons, verification codes, compile seconds, CUPTI busy, peak device memory), results.jsonl (one JSON line per model
and variant of every timed model; this call's lines are also printed on stdout as each model
finishes), the tables (train_step_table.py) on stdout and in table.md, and every invocation's
records and logs (warm/, runs/, python/).
Resumable: a rerun with the same OUT_DIR skips warmed and timed models (delete timing/<model>.json
to time one again); with --deadline-s the run stops starting work that would not end in time, so
a long run can be split over several device commands on one machine (OUT_DIR must then persist:
a git-ignored folder such as build-gpu/trainzoo, not $OUT), and --part K/N splits the zoo over
machines (train_step_table.py renders the parts' timing/ files as one table).
Usage: python3 bench/train_step_anchor.py RUNNER OUT_DIR [--models zoo|a,b] [--rounds 2]
         [--warm-jobs 4] [--device cuda|cpu] [--deadline-s S] [--part K/N] [--variants ...]
"""
import argparse
import concurrent.futures
import contextlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import threading
import time

from anchor_steps import TRAIN_WITH_SGD, has_pip_original  # bench/, beside this script
import train_step_table

HERE = os.path.dirname(os.path.abspath(__file__))
OURS = train_step_table.OURS
PYTHON = train_step_table.PYTHON
VARIANTS = train_step_table.VARIANTS
DYNAMO = {"ours_eager": "None", "ours_cudagraphs": "cudagraphs", "ours_inductor": "inductor",
          "ours_openxla": "openxla"}

# Rough H100 (16 cores) costs for the start-of-run estimate, seconds: a timing child (start,
# model build, warm-up repeat, capture or package load), a Python step's warm compile (Dynamo
# retrace with cache hits), one model's cold warm-up jobs (ours: eager/cudagraphs/verify children
# and the inductor and openxla compiles; Python: the two torch.compiles), and a typical step.
CHILD_S = 5.0
PYTHON_WARM_COMPILE_S = 15.0
OURS_COLD_S = 150.0
PYTHON_COLD_S = 100.0
STEP_S = 0.025
PARALLEL_EFFICIENCY = 0.7  # of --warm-jobs compile jobs sharing 16 cores

# Warm-up deadlines, seconds: our sweep is not started with less than OURS_WARM_MARGIN_S left
# (a compile-ahead phase that cannot finish one model's compiles is wasted), a Python warm-up job
# not with less than PYTHON_WARM_MARGIN_S (its two cold torch.compiles: 1-3 min on a busy
# host); the sweep is polled every SWEEP_POLL_S for finished models and sent SIGTERM with
# SWEEP_STOP_MARGIN_S left (it stops its child within --subprocess-grace-period, 5 s, and its
# compile service); a Python warm-up is killed at the deadline, or after PYTHON_WARM_TIMEOUT_S.
OURS_WARM_MARGIN_S = 120.0
PYTHON_WARM_MARGIN_S = 180.0
SWEEP_POLL_S = 5.0
SWEEP_STOP_MARGIN_S = 30.0
PYTHON_WARM_TIMEOUT_S = 1500.0


def load_json(path):
    """The JSON file's content, or None when there is none."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def first_line(text, limit=300):
    text = (text or "").strip()
    return (text.splitlines()[0] if text else "")[:limit]


def compile_helper_python(runner):
    """The Python experiment_runner runs its compile helpers with: BENCHMATRIX_PYTHON, else the
    one its build was configured with (Python3_EXECUTABLE in the CMakeCache.txt beside it), else
    this one."""
    if os.environ.get("BENCHMATRIX_PYTHON"):
        return os.environ["BENCHMATRIX_PYTHON"]
    cache = os.path.join(os.path.dirname(runner), "CMakeCache.txt")
    if os.path.exists(cache):
        with open(cache) as f:
            found = re.search(r"^Python3_EXECUTABLE:[A-Z]+=(.+)$", f.read(), re.MULTILINE)
        if found and os.access(found.group(1).strip(), os.X_OK):
            return found.group(1).strip()
    return sys.executable


class Bench:
    """The run's settings, paths and deadline."""

    def __init__(self, args):
        self.args = args
        self.runner = os.path.abspath(args.runner)
        self.out = os.path.abspath(args.out_dir)
        self.device = args.device
        self.variants = args.variants
        self.ours = [v for v in OURS if v in self.variants]
        self.python = [v for v in PYTHON if v in self.variants]
        self.started = time.monotonic()
        self.deadline = self.started + args.deadline_s if args.deadline_s else None
        self.cache = os.path.join(self.out, "cache")
        self.python_exe = sys.executable
        real_helper = compile_helper_python(self.runner)
        caches = os.path.join(self.out, "caches")
        # Our train compile helper records its command line into each entry
        # (recording_compile_helper.sh); its Inductor/Triton caches are apart from Python's, so
        # that neither side's cold compile reuses the other's kernels.
        self.runner_env = dict(os.environ,
                               BENCHMATRIX_PYTHON=os.path.join(HERE, "recording_compile_helper.sh"),
                               TRAIN_STEP_BENCH_PYTHON=real_helper,
                               TORCHINDUCTOR_CACHE_DIR=os.path.join(caches, "ours-inductor"),
                               TRITON_CACHE_DIR=os.path.join(caches, "ours-triton"))
        self.python_env = dict(os.environ, PYTHONUNBUFFERED="1",
                               TORCHINDUCTOR_CACHE_DIR=os.path.join(caches, "python-inductor"),
                               TRITON_CACHE_DIR=os.path.join(caches, "python-triton"))
        for sub in ("warm/ours", "warm/python", "runs", "python", "timing", "cache"):
            os.makedirs(os.path.join(self.out, sub), exist_ok=True)

    def left_s(self):
        return self.deadline - time.monotonic() if self.deadline else math.inf

    def path(self, *parts):
        return os.path.join(self.out, *parts)


# ---- experiment_runner ----------------------------------------------------------------------

def variant_of(record):
    """Which of our variants a record is (None for the lazy-tensor SKIP)."""
    experiment = record["experiment"]
    if experiment["xla"]:
        return "ours_openxla" if experiment["dynamo"] == "openxla" else None
    return {None: "ours_eager", "cudagraphs": "ours_cudagraphs",
            "inductor": "ours_inductor"}.get(experiment["dynamo"])


def status_of(record):
    """("ok", None), ("SKIP", reason) or ("error", reason) of one record."""
    if record is None:
        return "error", "no record (the invocation failed; see its log)"
    metrics = record["metrics"]
    if metrics.get("per_iter_time"):
        return "ok", None
    error = str(metrics.get("error", "no per_iter_time and no error"))
    if error.startswith("SKIP"):
        return "SKIP", first_line(error[len("SKIP:"):] if error.startswith("SKIP:") else error)
    # An error's first line names it; the traceback's last line often says more.
    lines = [line for line in error.strip().splitlines() if line.strip()]
    reason = lines[0] if lines else error
    if len(lines) > 1:
        reason += " ... " + lines[-1].strip()
    return "error", reason[:400]


def runner_command(bench, models, directory, variants, extra, timeout_s, memory_pass=False):
    """experiment_runner's command line over `variants` of `models` into `directory`; the memory
    pass (peak_device_allocated_bytes: --repeat more runs after the timed ones) only if asked."""
    xla = ["--xla=None"] + (["--xla=PJRT"] if "ours_openxla" in variants else [])
    return [bench.runner, "--suite-name=torchbench", f"--accelerator={bench.device}", *xla,
            *(f"--dynamo={DYNAMO[v]}" for v in OURS if v in variants), "--test=train",
            f"--filter=^({'|'.join(models)})$", f"--output-dirname={directory}",
            f"--cache-dir={bench.cache}", *([] if memory_pass else ["--no-memory-pass"]),
            f"--subprocess-timeout={timeout_s}", *extra]


@contextlib.contextmanager
def runner_process(bench, command, directory):
    """experiment_runner started on `command` with the bench's environment, its output appended to
    `directory`.log after the command line; waited for on leaving."""
    os.makedirs(directory, exist_ok=True)
    with open(directory + ".log", "a") as log_file:
        log_file.write(" ".join(command) + "\n")
        log_file.flush()
        process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT,
                                   env=bench.runner_env)
        try:
            yield process
        finally:
            process.wait()


def run_runner(bench, model, directory, variants, extra, timeout_s, memory_pass=False):
    """One experiment_runner invocation over `variants` of `model` into `directory`; returns
    {variant: record}."""
    with runner_process(bench, runner_command(bench, [model], directory, variants, extra,
                                              timeout_s, memory_pass), directory):
        pass
    return read_records(os.path.join(directory, "results.jsonl"))


def read_records(path):
    """{variant: record} of a one-model results file (none when it is missing)."""
    return {variant: record for records in read_records_by_model(path).values()
            for variant, record in records.items()}


def read_records_by_model(path):
    """{model: {variant: record}} of a results file (the last record of a variant wins; none when
    the file is missing)."""
    by_model = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    record = json.loads(line)
                    if variant_of(record):
                        by_model.setdefault(record["model"]["model_name"], {})[
                            variant_of(record)] = record
    return by_model


def zoo_models(bench):
    """The torchbench models experiment_runner lists (its --dry-run), in its order."""
    command = [bench.runner, "--suite-name=torchbench", "--dry-run",
               f"--accelerator={bench.device}", "--xla=None", "--dynamo=None", "--test=train",
               f"--output-dirname={bench.path('listing')}"]
    listing = subprocess.run(command, capture_output=True, text=True, check=False)
    models = re.findall(r'--model-config=\{"model_name": "([^"]+)"\}',
                        listing.stdout + listing.stderr)
    if not models:
        raise SystemExit(f"cannot list the zoo: {' '.join(command)} printed no model "
                         f"configs:\n{listing.stderr[-2000:]}")
    return list(dict.fromkeys(models))


# ---- warm-up phase ---------------------------------------------------------------------------

def warm_variants(bench, model):
    """Our variants the warm-up runs for `model`: the selected ones (cudagraphs only to verify
    it: it has nothing to compile ahead), eager (its record gives the Python side the batch size)
    and, for a model without a pip original whose Python steps are selected, inductor (its cache
    entry holds the graph the Python side runs)."""
    wanted = set(bench.ours) | {"ours_eager"}
    if bench.args.no_verify:
        wanted.discard("ours_cudagraphs")
    if bench.python and not has_pip_original(model):
        wanted.add("ours_inductor")
    return [v for v in OURS if v in wanted]


def warm_ours_sweep(bench, models, on_model_warm):
    """Our warm-up of `models` in one experiment_runner invocation: --compile-ahead=--warm-jobs
    compiles every inductor and openxla train step of the part at once (each compile on its share
    of this process's CPUs), then its one-step sweep (--repeat=1 --iterations-per-run=1, and
    --verify unless --no-verify) runs every model's warm variants, loading what was compiled.
    As each model's records land, they are written to warm/ours/<model>/results.jsonl and
    on_model_warm(model, records) is called (it queues the model's Python warm-up). At the
    deadline the sweep gets SIGTERM: it stops its running child, keeps its finished records and
    compiled entries, and the next call's sweep resumes it (the runner's own resume, same
    output folder). One invocation over the union of the models' warm variants (a graph
    model's inductor for all when any needs it): one compile service and one pool of compiles
    instead of one invocation per model."""
    variants = sorted({v for model in models for v in warm_variants(bench, model)},
                      key=OURS.index)
    extra = ["--repeat=1", "--iterations-per-run=1", f"--compile-ahead={bench.args.warm_jobs}"]
    if not bench.args.no_verify:
        extra.append("--verify")
    directory = bench.path("warm", "sweep")
    command = runner_command(bench, models, directory, variants, extra, timeout_s=1500)
    results = os.path.join(directory, "results.jsonl")
    started = time.monotonic()
    reported = set()

    def report_new():
        for model, records in read_records_by_model(results).items():
            if model in reported or model not in models:
                continue
            if all(v in records for v in warm_variants(bench, model)):
                reported.add(model)
                write_warm_records(bench, model, records)
                log(f"warm ours {model}: after {time.monotonic() - started:.0f} s of the sweep, "
                    + ", ".join(f"{v} {status_of(r)[0]}" for v, r in records.items()))
                on_model_warm(model, records)

    with runner_process(bench, command, directory) as process:
        stopped = False
        while process.poll() is None:
            time.sleep(SWEEP_POLL_S)
            report_new()
            if not stopped and bench.left_s() < SWEEP_STOP_MARGIN_S:
                log(f"warm-up sweep: {bench.left_s():.0f} s to the deadline, stopping it "
                    "(SIGTERM; the next call resumes it)")
                process.terminate()
                stopped = True
    report_new()
    log(f"warm-up sweep exited {process.returncode} after {time.monotonic() - started:.0f} s; "
        f"{len(reported)} of {len(models)} models warmed")


def write_warm_records(bench, model, records):
    """The model's warm records as warm/ours/<model>/results.jsonl (what warmed() and the
    timing phase read), written whole or not at all."""
    directory = bench.path("warm", "ours", model)
    os.makedirs(directory, exist_ok=True)
    temporary = os.path.join(directory, "results.jsonl.tmp")
    with open(temporary, "w") as f:
        for record in records.values():
            f.write(json.dumps(record) + "\n")
    os.replace(temporary, os.path.join(directory, "results.jsonl"))


def python_spec(bench, model, ours_records, warm_calls=3):
    """train_step_python.py's --spec for `model`."""
    spec = {"model": model, "device": bench.device, "variants": bench.python,
            "warm_calls": warm_calls}
    eager = ours_records.get("ours_eager")
    if eager and eager["experiment"].get("batch_size"):
        spec["batch"] = eager["experiment"]["batch_size"]
    else:
        spec["batch_missing"] = ("no batch size: our eager warm-up record is "
                                 + "{}: {}".format(*status_of(eager)))
    if not has_pip_original(model):
        inductor = ours_records.get("ours_inductor")
        status, reason = status_of(inductor)
        package = (inductor or {}).get("compile", {}).get("package")
        if status == "ok" and package:
            spec["entry_dir"] = os.path.dirname(package)
        else:
            spec["entry_missing"] = (f"no exported graph: our inductor train warm-up record is "
                                     f"{status}: {reason}")
    return spec


def warm_python_job(bench, model, ours_records):
    """Python's warm-up of one model: train_step_python.py --warm-only (compiles every selected
    step once into the shared caches). Returns its ready report (with wall_s), saved in
    warm/python/<model>.json; an earlier call's report is reused. Stopped at the deadline (its
    compiled kernels stay in the caches): then nothing is saved, the next call runs it again, and
    None is returned."""
    path = bench.path("warm", "python", model + ".json")
    if os.path.exists(path):
        return load_json(path)
    started = time.monotonic()
    spec = python_spec(bench, model, ours_records)
    command = [bench.python_exe, os.path.join(HERE, "train_step_python.py"), "--spec",
               json.dumps(spec), "--warm-only"]
    timeout_s = min(PYTHON_WARM_TIMEOUT_S, bench.left_s())
    with open(bench.path("warm", "python", model + ".log"), "w") as log_file:
        try:
            process = subprocess.run(command, stdout=subprocess.PIPE, stderr=log_file, text=True,
                                     env=bench.python_env, timeout=timeout_s, check=False)
            output, status = process.stdout, process.returncode
        except subprocess.TimeoutExpired as expired:
            if timeout_s < PYTHON_WARM_TIMEOUT_S:
                log(f"warm python {model}: stopped at the deadline after "
                    f"{time.monotonic() - started:.0f} s; the next call runs it again")
                return None
            output = expired.stdout.decode() if isinstance(expired.stdout, bytes) else (
                expired.stdout or "")
            status = f"timed out after {PYTHON_WARM_TIMEOUT_S:.0f} s"
    ready = next((json.loads(line) for line in output.splitlines()
                  if line.startswith("{") and '"ready"' in line), None)
    if ready is None:
        ready = {"event": "ready", "model": model, "variants": {}, "errors": {},
                 "model_error": f"the Python warm-up exited ({status}) without a report; see "
                                f"warm/python/{model}.log"}
    ready["wall_s"] = round(time.monotonic() - started, 1)
    with open(path, "w") as f:
        json.dump(ready, f)
    log(f"warm python {model}: {ready['wall_s']:.0f} s, "
        + (ready["model_error"] or ", ".join(
            f"{v} {s['warm_up_s']:.0f} s" for v, s in ready["variants"].items())))
    return ready


def warm_phase(bench, models):
    """Every model's warm-up: our side in one sweep (warm_ours_sweep), each model's Python job
    queued in a pool of --warm-jobs as soon as its records are in (it needs the batch size and,
    for an exported graph, the cache entry); a model whose records an earlier call wrote queues
    its Python job at once, beside the sweep. Python jobs that would start past the deadline are
    left for the next call, and a started one is stopped at the deadline."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=bench.args.warm_jobs)
    left = []
    python = []
    lock = threading.Lock()

    def guarded(model, records):
        if bench.left_s() < PYTHON_WARM_MARGIN_S:
            with lock:
                left.append(model)
            return None
        return warm_python_job(bench, model, records)

    def on_model_warm(model, records):
        if bench.python and not python_warmed(bench, model):
            python.append(pool.submit(guarded, model, records))

    ours_pending = []
    for model in models:
        records = warm_records(bench, model)
        if all(v in records for v in warm_variants(bench, model)):
            on_model_warm(model, records)
        else:
            ours_pending.append(model)
    if ours_pending:
        if bench.left_s() < OURS_WARM_MARGIN_S:
            left.extend(ours_pending)
        else:
            warm_ours_sweep(bench, ours_pending, on_model_warm)
    concurrent.futures.wait(python)
    for future in python:
        future.result()  # re-raises a bug in a job
    pool.shutdown()
    left.extend(m for m in ours_pending if not warmed(bench, m))
    if left:
        log(f"warm-up stopped at the deadline; not warmed: {', '.join(sorted(set(left)))}")
    return not left


def warmed(bench, model):
    """Whether the warm-up phase finished `model` (in this call or an earlier one)."""
    records = warm_records(bench, model)
    ours_done = all(v in records for v in warm_variants(bench, model))
    return ours_done and (not bench.python or python_warmed(bench, model))


def python_warmed(bench, model):
    """Whether the model's Python warm-up report is on disk (this call's or an earlier one's)."""
    return os.path.exists(bench.path("warm", "python", model + ".json"))


def warm_records(bench, model):
    """{variant: record} of the model's warm-up invocation."""
    return read_records(bench.path("warm", "ours", model, "results.jsonl"))


# ---- timing phase ----------------------------------------------------------------------------

class PythonProcess:
    """A model's train_step_python.py, started ahead and asked to time its variants."""

    def __init__(self, bench, model, spec):
        self.model = model
        self.log_path = bench.path("python", model + ".log")
        self.log_file = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [bench.python_exe, os.path.join(HERE, "train_step_python.py"), "--spec",
             json.dumps(spec)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.log_file, text=True, env=bench.python_env)

    def read(self):
        """The process's next report, or None when it exited."""
        for line in self.process.stdout:
            if line.startswith("{"):
                return json.loads(line)
        return None

    def exit_reason(self):
        return (f"the Python process exited (status {self.process.wait()}); see "
                f"{os.path.relpath(self.log_path)}")

    def time(self, iters, repeats):
        try:
            self.process.stdin.write(json.dumps({"cmd": "time", "iters": iters,
                                                 "repeats": repeats}) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            return None
        return self.read()

    def close(self):
        try:
            self.process.stdin.write(json.dumps({"cmd": "exit"}) + "\n")
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log_file.close()


def counted(values):
    """The counted repeats: repeat 0 is warm-up unless it is the only one (as our records)."""
    return values[1:] if len(values) > 1 else values


def noise_note(record):
    """The record's noise reasons, less the one our own idle Python processes cause."""
    reasons = [r for r in (record.get("noise") or {}).get("reasons", [])
               if "other process" not in r]
    return "; ".join(reasons)


def warm_compile(record):
    """Our warm-up record's compile figures: the compile-ahead phase's (compile.ahead: the cold
    compile, several at once) where the sweep compiled ahead, else the timed child's own."""
    ahead = record.get("compile", {}).get("ahead")
    if ahead:
        return {"compile_time_s": ahead.get("compile_time_s"),
                "compile_helper_s": ahead.get("compile_helper_s"),
                "cache_hit": ahead.get("cache_hit"), "ahead": True,
                "status": status_of(record)[0]}
    return {"compile_time_s": (record["metrics"].get("compile_time_s") or [None])[0],
            "compile_helper_s": (record["metrics"].get("compile_helper_s") or [None])[0],
            "cache_hit": record.get("compile", {}).get("cache_hit"), "ahead": False,
            "status": status_of(record)[0]}


def time_model(bench, model, python, ready):
    """The model's rounds; returns its result (written to timing/<model>.json)."""
    args = bench.args
    started = time.monotonic()
    warm = warm_records(bench, model)
    variants = {v: {"per_iter_ms": [], "status": None, "reason": None} for v in VARIANTS
                if v in bench.variants}
    notes = []
    noisy = {}  # variant -> [(round, the record's noise reasons)]
    result = {"model": model, "batch": None, "optimizer": "SGD" if model in TRAIN_WITH_SGD
              else "Adam", "variants": variants, "detail": None,
              "source": "pip original" if has_pip_original(model) else "exported graph",
              "verification": {v: r.get("verification_code") for v, r in warm.items()
                               if v in bench.ours},
              "notes": notes, "timing_compile": {}, "recompiles_during_timing": 0}
    eager = warm.get("ours_eager")
    if eager:
        result["batch"] = eager["experiment"].get("batch_size")
    accelerator = next((r["experiment"].get("accelerator_model") for r in warm.values()
                        if r["experiment"].get("accelerator_model")), None)
    result["accelerator_model"] = accelerator
    python_warm = load_json(bench.path("warm", "python", model + ".json")) or {}
    result["python_warm"] = python_warm.get("variants", {})
    result["warm"] = {"ours": {v: warm_compile(r) for v, r in warm.items()},
                      "python_wall_s": python_warm.get("wall_s")}
    if ready is not None:
        result.update(source=ready.get("source"), detail=ready.get("detail"),
                      entry=ready.get("entry"))
        result["timing_compile"] = ready.get("variants", {})
        for variant, warmed_up in result["timing_compile"].items():
            if variant in variants and warmed_up.get("peak_allocated_bytes") is not None:
                variants[variant]["peak_allocated_bytes"] = warmed_up["peak_allocated_bytes"]
        result["batch"] = result["batch"] or ready.get("batch")
        for variant, reason in ready.get("errors", {}).items():
            variants[variant].update(status="error", reason=f"compile/warm-up: {reason}")
        if ready.get("model_error"):
            for variant in bench.python:
                variants[variant].update(status="not run", reason=ready["model_error"])
    elif bench.python:
        for variant in bench.python:
            variants[variant].update(status="not run", reason=python.exit_reason() if python
                                     else "no Python process")

    # A variant whose warm-up record is a SKIP (a skip list, no CUDA, an export that fails) is
    # not run again: it would SKIP again, after the same export attempt. Errors are retried (the
    # warm-up ran several jobs at once: an out-of-memory error there may be the crowd's).
    ours = []
    for variant in bench.ours:
        status, reason = status_of(warm[variant]) if variant in warm else ("ok", None)
        if status == "SKIP":
            variants[variant].update(status="SKIP", reason=reason)
        else:
            ours.append(variant)
    for round_index in range(args.rounds):
        last = round_index == args.rounds - 1
        if ours:
            # the last round also takes CUPTI's busy time and the memory pass's peaks (issue 50:
            # peak device memory beside every figure)
            cupti = ["--profile-cupti"] if last and bench.device == "cuda" else []
            records = run_runner(bench, model, bench.path("runs", model, f"round{round_index}"),
                                 ours, [f"--repeat={args.repeats + 1}",
                                        f"--iterations-per-run={args.iters}", "--no-resume",
                                        *cupti], timeout_s=600, memory_pass=last)
            for variant in ours:
                record = records.get(variant)
                status, reason = status_of(record)
                entry = variants[variant]
                if status != "ok":
                    if not entry["per_iter_ms"]:
                        entry.update(status=status, reason=reason)
                    elif reason:
                        notes.append(f"{variant} round {round_index}: {status}: {reason}")
                    continue
                entry["per_iter_ms"] += [t * 1e3 for t in
                                         counted(record["metrics"]["per_iter_time"])]
                busy = record["metrics"].get("cupti_per_iter_busy_time_s")
                if busy:
                    entry["busy_ms"] = [b * 1e3 for b in counted(busy)]
                memory_ops = record["metrics"].get("cupti_per_iter_memory_op_time_s")
                if memory_ops:  # memcpy/memset time inside busy (records since 2026-11-28)
                    entry["memory_op_ms"] = [m * 1e3 for m in counted(memory_ops)]
                peaks = record["metrics"].get("peak_device_allocated_bytes")
                if peaks:  # CUDA graph steps: the larger of the pass's and the capture's peak
                    entry["peak_allocated_bytes"] = statistics.median(peaks)
                fallback = record.get("compile", {}).get("capture_fallback")
                if fallback and round_index == 0:
                    notes.append(f"{variant}: capture_fallback: {first_line(fallback)}")
                if record.get("compile", {}).get("cache_hit") is False:
                    notes.append(f"{variant} round {round_index}: compiled in the timing child "
                                 "(no warm cache entry): its warm-up was incomplete")
                noise = noise_note(record)
                if noise and (record.get("noise") or {}).get("verdict") == "noisy":
                    noisy.setdefault(variant, []).append((round_index, noise))
                if result["batch"] is None:
                    result["batch"] = record["experiment"].get("batch_size")
        if python is not None and ready is not None and not ready.get("model_error"):
            timed = python.time(args.iters, args.repeats)
            if timed is None:
                reason = python.exit_reason()
                for variant in bench.python:
                    if variants[variant]["status"] is None and not variants[variant]["per_iter_ms"]:
                        variants[variant].update(status="error", reason=reason)
                notes.append(f"Python process, round {round_index}: {reason}")
                python = None
                continue
            for variant, values in timed["per_iter_ms"].items():
                variants[variant]["per_iter_ms"] += values
            for variant, reason in timed.get("errors", {}).items():
                variants[variant].update(status="error", reason=f"timing: {reason}")
            if timed.get("recompiles"):
                result["recompiles_during_timing"] += timed["recompiles"]
                notes.append(f"Python: {timed['recompiles']} graph(s) compiled during round "
                             f"{round_index}'s timing (a guard failed)")
    for variant, rounds in noisy.items():
        notes.append(f"{variant}: noisy record in round(s) "
                     f"{', '.join(str(r) for r, _ in rounds)} (round {rounds[0][0]}: "
                     f"{rounds[0][1]})")
    for variant, entry in variants.items():
        if entry["per_iter_ms"] and entry["status"] in (None, "ok"):
            entry["status"] = "ok"
        elif entry["per_iter_ms"]:  # timed in some rounds, failed later
            notes.append(f"{variant}: {entry['status']} in a later round: {entry['reason']}")
            entry.update(status="ok", reason=None)
        elif entry["status"] is None:
            entry.update(status="not run", reason="no figure (see the logs)")
    if bench.device != "cuda":
        notes.append("no CUPTI GPU-busy figures on the CPU")
    result["wall_s"] = round(time.monotonic() - started, 1)
    return result


def result_lines(result):
    for variant, entry in result["variants"].items():
        yield {"model": result["model"], "variant": variant, "source": result.get("source"),
               "batch": result.get("batch"), "per_iter_ms": entry["per_iter_ms"],
               "status": entry["status"], "reason": entry["reason"],
               "verification": result["verification"].get(variant),
               "cupti_busy_ms": entry.get("busy_ms"),
               "peak_allocated_bytes": entry.get("peak_allocated_bytes")}


def timing_phase(bench, models):
    """Times the warmed models not timed yet, --warm-jobs Python processes started together."""
    pending = [m for m in models if not os.path.exists(bench.path("timing", m + ".json"))]
    not_warm = [m for m in pending if not warmed(bench, m)]
    if not_warm:
        log(f"not warmed up yet, not timed in this call: {', '.join(not_warm)}")
    pending = [m for m in pending if m not in not_warm]
    per_model_s = estimate_model_s(bench)
    durations = []
    group_size = max(1, bench.args.warm_jobs)
    for first in range(0, len(pending), group_size):
        group = pending[first:first + group_size]
        expected = (statistics.mean(durations) if durations else per_model_s)
        if bench.left_s() < expected + PYTHON_WARM_COMPILE_S:
            log(f"stopping at the deadline ({bench.left_s():.0f} s left, a model takes about "
                f"{expected:.0f} s); not timed: {', '.join(pending[first:])}")
            return False
        processes = {}
        if bench.python:
            for model in group:
                spec = python_spec(bench, model, warm_records(bench, model))
                processes[model] = PythonProcess(bench, model, spec)
        readies = {model: process.read() for model, process in processes.items()}
        for model, ready in readies.items():
            if ready:
                log(f"python {model} ready: " + (ready.get("model_error") or ", ".join(
                    f"{v} {s['warm_up_s']:.1f} s" for v, s in ready["variants"].items())))
        for index, model in enumerate(group):
            expected = (statistics.mean(durations) if durations else per_model_s)
            if bench.left_s() < expected:
                log(f"stopping at the deadline ({bench.left_s():.0f} s left); not timed: "
                    f"{', '.join(group[index:] + pending[first + group_size:])}")
                for process in processes.values():
                    process.close()
                return False
            started = time.monotonic()
            result = time_model(bench, model, processes.get(model), readies.get(model))
            if model in processes:
                processes.pop(model).close()
            with open(bench.path("timing", model + ".json"), "w") as f:
                json.dump(result, f)
            for line in result_lines(result):
                print(json.dumps(line), flush=True)
            durations.append(time.monotonic() - started)
            log(f"timed {model} in {durations[-1]:.0f} s")
    return True


# ---- estimate and main -----------------------------------------------------------------------

def estimate_model_s(bench):
    """Rough seconds to time one model (H100 constants above)."""
    args = bench.args
    children = len(bench.ours) * CHILD_S
    python_steps = len(bench.python) * args.repeats * args.iters * STEP_S
    return args.rounds * (children + python_steps + 1) + (
        PYTHON_WARM_COMPILE_S * len(bench.python) / max(1, args.warm_jobs))


def print_estimate(bench, models):
    to_warm = [m for m in models if not warmed(bench, m)] if "warm" in bench.args.phase else []
    to_time = ([m for m in models if not os.path.exists(bench.path("timing", m + ".json"))]
               if "time" in bench.args.phase else [])
    ours_cold = OURS_COLD_S * len(bench.ours) / len(OURS)
    python_cold = PYTHON_COLD_S * len(bench.python) / len(PYTHON)
    warm_s = len(to_warm) * (ours_cold + python_cold) / (bench.args.warm_jobs *
                                                           PARALLEL_EFFICIENCY)
    time_s = len(to_time) * estimate_model_s(bench)
    log(f"{len(models)} models; to warm up: {len(to_warm)} (about {warm_s / 60:.0f} min with "
        f"{bench.args.warm_jobs} jobs), to time: {len(to_time)} (about {time_s / 60:.0f} min: "
        f"{args_line(bench)}); expected wall time about {(warm_s + time_s) / 60:.0f} min on an "
        "H100 with 16 cores (rough: compile times vary 3x between models)"
        + (f"; deadline in {bench.args.deadline_s:.0f} s" if bench.deadline else ""))


def args_line(bench):
    args = bench.args
    return (f"{args.rounds} rounds x ({len(bench.ours)} experiment_runner children + "
            f"{len(bench.python)} Python variants), {args.repeats} counted repeats of "
            f"{args.iters} steps per round and variant")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runner", help="the experiment_runner binary")
    parser.add_argument("out_dir")
    parser.add_argument("--models", default="zoo",
                        help="comma-separated models, or zoo (default): every torchbench model "
                             "experiment_runner lists")
    parser.add_argument("--part", default="1/1",
                        help="K/N: only the K-th of N interleaved parts of the model list (models "
                             "K-1, K-1+N, ...), to split the zoo over machines; "
                             "train_step_table.py renders the parts' timing/ files together")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help=f"comma-separated, of {', '.join(VARIANTS)} (default: all)")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                        help="cuda (the bench), or cpu (a smoke test: no cudagraphs, openxla or "
                             "CUPTI there, their rows say why)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    parser.add_argument("--iters", type=int, default=10, help="steps per timed repeat")
    parser.add_argument("--repeats", type=int, default=3,
                        help="counted repeats per round and variant (ours: one more, the warm-up)")
    parser.add_argument("--warm-jobs", type=int, default=4,
                        help="warm-up jobs at a time, and Python processes started together in "
                             "the timing phase (default 4, for 16 cores)")
    parser.add_argument("--phase", default="warm,time",
                        help="warm, time, or both (default); the tables are printed after either")
    parser.add_argument("--deadline-s", type=float, default=0,
                        help="stop starting work that would not end within this many seconds of "
                             "the start (0: none); rerun to continue")
    parser.add_argument("--no-verify", action="store_true",
                        help="warm up without --verify (no verification codes in the table)")
    args = parser.parse_args()
    args.variants = [v for v in args.variants.split(",") if v]
    unknown = set(args.variants) - set(VARIANTS)
    if unknown:
        parser.error(f"--variants: unknown {sorted(unknown)}; expected some of {VARIANTS}")
    args.phase = {p for p in args.phase.split(",") if p}
    if not args.phase <= {"warm", "time"}:
        parser.error(f"--phase: expected warm and/or time, got {sorted(args.phase)}")
    if args.rounds < 1 or args.iters < 1 or args.repeats < 1 or args.warm_jobs < 1:
        parser.error("--rounds, --iters, --repeats and --warm-jobs must be at least 1")
    part = re.fullmatch(r"(\d+)/(\d+)", args.part)
    if not part or not 1 <= int(part.group(1)) <= int(part.group(2)):
        parser.error(f"--part: expected K/N with 1 <= K <= N, got {args.part!r}")
    args.part_index, args.part_count = int(part.group(1)), int(part.group(2))
    if not os.access(args.runner, os.X_OK):
        parser.error(f"{args.runner} is not an executable experiment_runner")

    bench = Bench(args)
    models = zoo_models(bench) if args.models == "zoo" else [m for m in args.models.split(",")
                                                              if m]
    models = models[args.part_index - 1::args.part_count]
    print_estimate(bench, models)
    if "warm" in args.phase:
        # A model timed already (here, or by an earlier call whose timing/ file was copied in:
        # train_step_gpu.sh's DONE_DIR) needs no warm-up.
        warm_phase(bench, [m for m in models if not warmed(bench, m)
                           and not os.path.exists(bench.path("timing", m + ".json"))])
        log(f"warm-up phase done after {(time.monotonic() - bench.started) / 60:.1f} min")
    if "time" in args.phase:
        timing_phase(bench, models)
        log(f"timing phase done after {(time.monotonic() - bench.started) / 60:.1f} min")
    accelerator = next((r.get("accelerator_model") for r in map(
        lambda m: load_json(bench.path("timing", m + ".json")), models) if r), None)
    meta = (f"{accelerator or args.device}, {args_line(bench)}; warm-up {args.warm_jobs} jobs "
            f"at a time; `bench/train_step_anchor.py --models {args.models} --part {args.part} "
            f"--rounds {args.rounds} --iters {args.iters} --repeats {args.repeats}`")
    with open(bench.path("meta.json"), "w") as f:
        json.dump({"line": meta, "models": models}, f)
    print()
    results = train_step_table.render(bench.out, models, meta)
    with open(bench.path("results.jsonl"), "w") as f:  # every timed model, this call's or not
        for result in results.values():
            for line in result_lines(result):
                f.write(json.dumps(line) + "\n")
    log(f"tables in {bench.path('table.md')}; total {(time.monotonic() - bench.started) / 60:.1f} "
        "min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
