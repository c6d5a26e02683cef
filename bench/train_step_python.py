"""The Python side of the train-step zoo bench (bench/train_step_anchor.py): one model's train
step as PyTorch runs it, eager and under torch.compile, in a process of its own.

The step is the original runner's: zero_grad (to None), forward and loss, backward, then SGD
(anchor_steps.TRAIN_WITH_SGD) or Adam with lr 0.01 and torch.optim's defaults (foreach on CUDA).
The model is
  - "pip original": the torchvision, timm or transformers model (anchor_steps.pip_original) at
    our record's batch size, forward and anchor_steps.reduce_to_scalar_loss under float16 autocast
    on CUDA (our CUDA train default, no GradScaler; float32 on the CPU, as ours);
  - "exported graph" (models with no pip original): the very forward our inductor train compile
    traced (traced.pt in its compile cache entry: forward(*inputs, *parameters, *buffers), the
    autocast casts traced into it), converted with TS2EPConverter at static shapes as the compile
    helper does, its state made this module's parameters and buffers, the loss computed as our
    compiled step computes it (benchmatrix_compile.train_step._ForwardAndLoss: the output's nesting
    and float32 sums under autocast), on our example inputs (inputs.pt). The helper's parameter
    count and loss structure come from helper_argv.txt, which bench/recording_compile_helper.sh
    (the bench's BENCHMATRIX_PYTHON) wrote into the entry. The only rewrite is the helper's
    _expanded_int_lists (one-element int lists widened as Python's argument parser does; Inductor's
    max-pool backward lowering needs them); dropout stays aten.dropout, as Python would run it.
Variants: python_eager (the step), python_compile (torch.compile(step)) and python_reduce_overhead
(torch.compile(step, mode="reduce-overhead")), each on its own copy of the model and optimizer,
each warmed up with --warm-calls calls (compile, then CUDA graph recording) before any timing.

Protocol: --spec is a JSON object {"model", "device", "variants", "batch" (pip originals),
"entry_dir" (exported graphs; "entry_missing": why there is none), "warm_calls"}. The process
writes JSON lines to its stdout (everything else it or torch prints goes to stderr):
  {"event": "ready", "model", "source", "detail", "entry" (exported graphs: the cache entry),
   "batch", "optimizer", "build_s",
   "variants": {variant: {"first_call_s", "warm_up_s", "cache": {counter: count},
                          "peak_allocated_bytes"}},
   "errors": {variant: reason}, "model_error": reason or null}
`peak_allocated_bytes` (CUDA; null on the CPU) is the CUDA caching allocator's peak over the
warm-up calls after the first (the steps, reduce-overhead's CUDA graph recording among them; not
the compile), less what was allocated before the variant's model was built: its own model,
optimizer state, inputs and step, as experiment_runner's peak_device_allocated_bytes of one child.
`cache` is the change of Inductor's FX-graph and AOTAutograd cache counters over the warm-up (hits
mean the compile reused the bench's shared caches). With --warm-only it exits after that (the
bench's warm-up phase); otherwise it reads commands from stdin, one JSON object a line:
  {"cmd": "time", "iters": N, "repeats": R} -> {"event": "timed", "per_iter_ms": {variant: [R]},
                                                  "errors": {variant: reason}, "recompiles": n}
  {"cmd": "profile", "iters": N, "dir": D} -> {"event": "profiled", "traces": {variant: path},
                                                  "errors": {variant: reason}}
      N back-to-back steps of each variant under torch.profiler (CUDA kernels and memory
      operations on CUDA, CPU ops), its Chrome trace written to D/<variant>.json: what
      bench/train_kernels.py compares with our --dump-pytorch-profiles traces.
  {"cmd": "exit"} or end of input -> exits.
Each repeat is N back-to-back steps timed with CUDA events (perf_counter on the CPU).
"""
import argparse
import contextlib
import copy
import json
import os
import re
import sys
import time
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))  # benchmatrix_compile

from anchor_steps import (TRAIN_WITH_SGD, has_pip_original, pip_original,  # noqa: E402
                          pip_original_name, reduce_to_scalar_loss)

VARIANTS = ("python_eager", "python_compile", "python_reduce_overhead")
HELPER_ARGV = "helper_argv.txt"  # bench/recording_compile_helper.sh's record in a cache entry
LEARNING_RATE = 0.01  # the original runner's, for SGD and Adam


class BuildError(Exception):
    """The model cannot be built here; the message says why (it becomes the rows' reason)."""


def reason_of(error):
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {message}"[:400]


def helper_arguments(entry_dir):
    """The compile helper's --parameter-count, --loss-structure and --amp for this entry."""
    path = os.path.join(entry_dir, HELPER_ARGV)
    if not os.path.exists(path):
        raise BuildError(f"{entry_dir} has no {HELPER_ARGV} (built without "
                         "bench/recording_compile_helper.sh as BENCHMATRIX_PYTHON), so the train "
                         "step's parameter count and loss structure are unknown")
    with open(path) as f:
        argv = f.read().splitlines()

    def value(flag):
        if flag not in argv or argv.index(flag) + 1 >= len(argv):
            raise BuildError(f"{path} lacks {flag}")
        return argv[argv.index(flag) + 1]

    if "--train" not in argv:
        raise BuildError(f"{path} is not a --train compile")
    return int(value("--parameter-count")), json.loads(value("--loss-structure")), "--amp" in argv


def batch_of_entry(entry_dir):
    with open(os.path.join(entry_dir, "manifest.json")) as f:
        description = json.load(f).get("description", "")
    found = re.search(r"batch size (\d+)", description)
    return int(found.group(1)) if found else None


def exported_graph(spec, device):
    """(make, info) for a model without a pip original: make() builds a fresh copy of the model
    from our traced train forward and returns (loss function, parameters, inputs)."""
    import torch
    from torch._export.converter import TS2EPConverter

    from benchmatrix_compile.__main__ import static_shapes_in_ts2ep
    from benchmatrix_compile.train_step import (_constants_as_buffers, _expanded_int_lists,
                                                _ForwardAndLoss)

    entry = spec.get("entry_dir")
    if not entry:
        raise BuildError(spec.get("entry_missing") or "no inductor train cache entry")
    parameter_count, loss_structure, amp = helper_arguments(entry)
    module = torch.jit.load(os.path.join(entry, "traced.pt"), map_location=device)
    example = tuple(x.to(device) for x in torch.load(os.path.join(entry, "inputs.pt"),
                                                     weights_only=True))
    state = tuple(x.to(device) for x in torch.load(os.path.join(entry, "state.pt"),
                                                   weights_only=True))
    with static_shapes_in_ts2ep():
        exported = TS2EPConverter(module, example + state).convert()
    forward = _expanded_int_lists(_constants_as_buffers(exported.module()))
    parameters, buffers = state[:parameter_count], state[parameter_count:]

    def make():
        # State and constants stay where the traced graph has them (no .to(device)).
        model = _ForwardAndLoss(copy.deepcopy(forward), parameters, buffers, loss_structure, amp)
        model.train()
        return (lambda *inputs: model(*inputs)[0],
                [p for p in model.parameters() if p.requires_grad], example)

    info = {"source": "exported graph", "entry": entry,
            "detail": f"our traced train forward via TS2EPConverter, {parameter_count} "
                      f"parameters, loss structure {json.dumps(loss_structure)}"
                      f"{', float16 autocast casts traced in' if amp else ''}",
            "batch": batch_of_entry(entry), "autocast": False}
    return make, info


def pip_original_model(spec, device):
    """(make, info) for a model with a pip original, at our record's batch size."""
    import torch
    name, batch = spec["model"], spec.get("batch")
    if not batch:
        raise BuildError(spec.get("batch_missing") or "no batch size from our eager record")

    def make():
        torch.manual_seed(0)
        model, inputs = pip_original(name, batch)
        model = model.to(device).train()
        inputs = tuple(x.to(device) for x in inputs)
        return (lambda *xs: reduce_to_scalar_loss(model(*xs)),
                [p for p in model.parameters() if p.requires_grad], inputs)

    info = {"source": "pip original", "detail": pip_original_name(name), "batch": batch,
            "autocast": device == "cuda"}
    return make, info


def make_step(loss_function, parameters, use_sgd, autocast, variant):
    """The original runner's train step, as a function of its own code object per variant (so
    that the compiled variants' Dynamo caches never meet)."""
    import torch
    optimizer = (torch.optim.SGD(parameters, lr=LEARNING_RATE) if use_sgd
                 else torch.optim.Adam(parameters, lr=LEARNING_RATE))

    def step(*inputs):
        optimizer.zero_grad(set_to_none=True)
        with (torch.autocast("cuda", dtype=torch.float16) if autocast
              else contextlib.nullcontext()):
            loss = loss_function(*inputs)
        loss.backward()
        optimizer.step()

    code = step.__code__.replace(co_name=f"step_{variant}")
    return types.FunctionType(code, step.__globals__, code.co_name, step.__defaults__,
                              step.__closure__)


def synchronize(device):
    import torch
    if device == "cuda":
        torch.cuda.synchronize()


def cache_counters():
    """Inductor's FX-graph and AOTAutograd cache counters (hits, misses, bypasses) so far."""
    from torch._dynamo.utils import counters
    return {f"{group}.{name}": count for group in ("inductor", "aot_autograd")
            for name, count in counters[group].items() if "cache" in name}


def allocated_bytes(device):
    """The CUDA caching allocator's allocated bytes now (None on the CPU)."""
    import torch
    return torch.cuda.memory_allocated() if device == "cuda" else None


def reset_peak(device):
    import torch
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()


def peak_bytes_over(device, base):
    """The allocated peak since reset_peak, less `base` (None on the CPU)."""
    import torch
    return torch.cuda.max_memory_allocated() - base if device == "cuda" else None


def compiled_graphs():
    from torch._dynamo.utils import counters
    return counters["stats"]["unique_graphs"]


def time_per_iter(step, inputs, iters, repeats, device):
    """`repeats` timings of `iters` back-to-back steps, ms per step."""
    import torch
    out = []
    for _ in range(repeats):
        if device == "cuda":
            start, end = (torch.cuda.Event(enable_timing=True),
                          torch.cuda.Event(enable_timing=True))
            start.record()
            for _ in range(iters):
                step(*inputs)
            end.record()
            torch.cuda.synchronize()
            out.append(start.elapsed_time(end) / iters)
        else:
            started = time.perf_counter()
            for _ in range(iters):
                step(*inputs)
            out.append((time.perf_counter() - started) * 1e3 / iters)
    return out


def prepare(spec, emit):
    """Builds and warms up every variant; emits the ready line; returns {variant: (step,
    inputs)} of the variants that are ready."""
    import torch
    device, name = spec["device"], spec["model"]
    torch.set_float32_matmul_precision("high")  # as experiment_runner without --disable-tf32
    ready = {"event": "ready", "model": name, "source": None, "detail": None, "batch": None,
             "optimizer": "SGD" if name in TRAIN_WITH_SGD else "Adam", "build_s": None,
             "variants": {}, "errors": {}, "model_error": None}
    steps = {}
    started = time.perf_counter()
    try:
        make, info = (pip_original_model(spec, device) if has_pip_original(name)
                      else exported_graph(spec, device))
    except Exception as error:  # noqa: BLE001 - the row says why
        traceback.print_exc()
        ready["model_error"] = reason_of(error) if not isinstance(error, BuildError) \
            else str(error)
        ready["source"] = "pip original" if has_pip_original(name) else "exported graph"
        emit(ready)
        return steps
    ready.update(source=info["source"], detail=info["detail"], batch=info["batch"],
                 entry=info.get("entry"), build_s=round(time.perf_counter() - started, 3))
    for variant in spec["variants"]:
        try:
            base = allocated_bytes(device)  # the earlier variants' models stay allocated
            loss_function, parameters, inputs = make()
            step = make_step(loss_function, parameters, name in TRAIN_WITH_SGD,
                             info["autocast"], variant)
            if variant == "python_compile":
                step = torch.compile(step)
            elif variant == "python_reduce_overhead":
                step = torch.compile(step, mode="reduce-overhead")
            before = cache_counters()
            synchronize(device)
            started = time.perf_counter()
            step(*inputs)  # the compile (Inductor compiles lazily, at the first call)
            synchronize(device)
            first_call_s = time.perf_counter() - started
            reset_peak(device)
            for _ in range(spec.get("warm_calls", 3) - 1):  # recompiles, CUDA graph recording
                step(*inputs)
            synchronize(device)
            peak = peak_bytes_over(device, base)
            after = cache_counters()
            ready["variants"][variant] = {
                "first_call_s": round(first_call_s, 3),
                "warm_up_s": round(time.perf_counter() - started, 3),
                "cache": {k: after[k] - before.get(k, 0) for k in after
                          if after[k] != before.get(k, 0)},
                "peak_allocated_bytes": peak}
            steps[variant] = (step, inputs)
        except Exception as error:  # noqa: BLE001 - one variant's failure is its row's reason
            traceback.print_exc()
            ready["errors"][variant] = reason_of(error)
    emit(ready)
    return steps


def profile_steps(steps, device, iters, directory):
    """Each variant's `iters` steps under torch.profiler; {variant: trace path}, {variant: error}."""
    import torch
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    os.makedirs(directory, exist_ok=True)
    traces, errors = {}, {}
    for variant, (step, inputs) in steps.items():
        try:
            synchronize(device)
            with torch.profiler.profile(activities=activities) as profiler:
                for _ in range(iters):
                    step(*inputs)
                synchronize(device)
            path = os.path.join(directory, f"{variant}.json")
            profiler.export_chrome_trace(path)
            traces[variant] = path
        except Exception as error:  # noqa: BLE001 - the variant's line says why
            traceback.print_exc()
            errors[variant] = reason_of(error)
    return traces, errors


def serve(steps, device, emit):
    """Answers the bench's time and profile commands until it says exit or closes our stdin."""
    for line in sys.stdin:
        command = json.loads(line)
        if command["cmd"] == "exit":
            return
        if command["cmd"] == "profile":
            traces, errors = profile_steps(steps, device, command["iters"], command["dir"])
            emit({"event": "profiled", "traces": traces, "errors": errors})
            continue
        if command["cmd"] != "time":
            raise SystemExit(f"unknown command {command!r}")
        per_iter_ms, errors = {}, {}
        graphs = compiled_graphs()
        for variant, (step, inputs) in list(steps.items()):
            try:
                per_iter_ms[variant] = time_per_iter(step, inputs, command["iters"],
                                                     command["repeats"], device)
            except Exception as error:  # noqa: BLE001
                traceback.print_exc()
                errors[variant] = reason_of(error)
                del steps[variant]
        emit({"event": "timed", "per_iter_ms": per_iter_ms, "errors": errors,
              "recompiles": compiled_graphs() - graphs})


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", required=True, help="the JSON object described above")
    parser.add_argument("--warm-only", action="store_true",
                        help="build, compile and warm up, report, exit (fills the caches)")
    args = parser.parse_args()
    spec = json.loads(args.spec)
    unknown = set(spec["variants"]) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; expected some of {VARIANTS}")
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever else is printed (torch's warnings, C++ output) goes to stderr

    def emit(message):
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    steps = prepare(spec, emit)
    if not args.warm_only:
        serve(steps, spec["device"], emit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
