"""The Python anchor for the inductor backend: the same graph, timed under torch.compile.

For every AOTInductor entry of a compile cache (written by experiment_runner --dynamo=inductor),
this loads the very TorchScript graph and example inputs the package was compiled from
(traced.pt, inputs.pt), converts them with TS2EPConverter as the compile helper does (static
shapes, python/benchmatrix_compile), and times
per iteration, with CUDA events, after warm-up:
  eager        ExportedProgram.module() uncompiled (a sanity check against experiment_runner's eager)
  compile      torch.compile(module)                          (Inductor, default mode)
  compile_ro   torch.compile(module, mode="reduce-overhead")  (Inductor with CUDA graphs)
  compile_ma   torch.compile(module, mode="max-autotune")     (issue 52; not by default)
One JSON line per model, precision and mode: {"model", "precision", "mode", "per_iter_ms": [...],
"median_ms", "compile_s", "peak_allocated_bytes", "host", "device", "timestamp"}; a model whose
conversion or compile fails gets {"model", "precision", "mode", "error"} and the others go on (a
device-side assert still ends the process: CUDA cannot recover from it). "precision" is the
entry's --precision as its description names it ("auto" where it names none); entries compiled in
an Inductor mode other than default are skipped (their graph is the default entry's).
Usage: python bench/torch_compile_anchor.py CACHE_DIR [--models a,b] [--iters 50]
       [--modes eager,compile,compile_ro,compile_ma]
"""
import argparse
import json
import os
import socket
import statistics
import sys
import time

import torch
from torch._export.converter import TS2EPConverter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from benchmatrix_compile.__main__ import static_shapes_in_ts2ep  # noqa: E402


def entries(cache_dir, wanted):
    for key in sorted(os.listdir(cache_dir)):
        manifest_path = os.path.join(cache_dir, key, "manifest.json")
        if not os.path.exists(manifest_path):
            continue
        with open(manifest_path) as f:
            description = json.load(f)["description"]
        parts = [part.strip() for part in description.split(";")]
        model = parts[0].removeprefix("model ")
        if "cuda" not in description or (wanted and model not in wanted):
            continue
        if any(part.startswith("Inductor mode ") for part in parts):
            continue  # the same graph as the default mode's entry
        if not os.path.exists(os.path.join(cache_dir, key, "traced.pt")):
            continue  # a train step or a torch.export package: not a forward graph
        precision = next((part.removeprefix("precision ") for part in parts
                          if part.startswith("precision ")), "auto")
        yield model, precision, os.path.join(cache_dir, key)


def time_per_iter(fn, args, iters, repeats):
    """Median-friendly list of per-iteration ms: `repeats` timings of `iters` back-to-back calls."""
    out = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn(*args)
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end) / iters)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cache_dir")
    parser.add_argument("--models", default="", help="comma-separated model names (default: all)")
    parser.add_argument("--iters", type=int, default=20, help="calls per timed repeat")
    parser.add_argument("--repeats", type=int, default=10, help="timed repeats")
    parser.add_argument("--modes", default="eager,compile,compile_ro",
                        help="comma-separated: eager, compile, compile_ro, compile_ma")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    unknown = set(modes) - set(TORCH_COMPILE_MODE)
    if unknown:
        parser.error(f"--modes: unknown {', '.join(sorted(unknown))} (choose from "
                     f"{', '.join(TORCH_COMPILE_MODE)})")
    wanted = set(filter(None, args.models.split(",")))
    torch.set_float32_matmul_precision("high")  # as experiment_runner without --disable-tf32
    # Every line names the machine and time, so a ratio is only ever taken within one machine.
    machine = {"host": socket.gethostname(), "device": torch.cuda.get_device_name()}
    for model, precision, directory in entries(args.cache_dir, wanted):
        for mode in modes:
            try:
                line = time_mode(directory, model, mode, args)
            except Exception as error:  # one model's failure is its own line, not the run's end
                line = {"model": model, "mode": mode, "error": f"{type(error).__name__}: {error}"[:2000]}
            line["precision"] = precision
            print(json.dumps({**line, **machine, "timestamp": time.time()}), flush=True)


# --modes value -> torch.compile's mode (None: not compiled; "default": torch.compile's default)
TORCH_COMPILE_MODE = {"eager": None, "compile": "default", "compile_ro": "reduce-overhead",
                      "compile_ma": "max-autotune"}


def time_mode(directory, model, mode, args):
    ts = torch.jit.load(os.path.join(directory, "traced.pt"), map_location="cuda")
    inputs = tuple(x.cuda() for x in torch.load(os.path.join(directory, "inputs.pt"), weights_only=True))
    with static_shapes_in_ts2ep():
        module = TS2EPConverter(ts, inputs).convert().module()
    torch._dynamo.reset()
    fn = module
    torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    with torch.no_grad():
        if TORCH_COMPILE_MODE[mode]:
            fn = torch.compile(module, mode=TORCH_COMPILE_MODE[mode])
        for _ in range(3):  # compile and warm up (cudagraph trees record on the 2nd/3rd call)
            fn(*inputs)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - started
        torch.cuda.reset_peak_memory_stats()  # the steps' peak, not the compile's
        times = time_per_iter(fn, inputs, args.iters, args.repeats)
    return {"model": model, "mode": mode, "per_iter_ms": times, "median_ms": statistics.median(times),
            "compile_s": compile_s, "peak_allocated_bytes": torch.cuda.max_memory_allocated()}

if __name__ == "__main__":
    sys.exit(main())
