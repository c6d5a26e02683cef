"""A/B of one compile-helper setting on cold AOTInductor compiles, interleaved (issue 22).

Runs `python -m benchmatrix_compile` (this checkout's python/) on the same graphs with the setting
off (A) and on (B), in rounds of ABBA order per model (A first in even rounds, B first in odd
ones), every compile in a fresh process with an empty Inductor cache directory and --fresh-caches
(the runner's --cold-start). A and B are environment settings of the helper (NAME=VALUE, or NAME=
to leave it unset), by default the precompiled headers built ahead off (A,
BENCHMATRIX_HEADERS_AHEAD=0) and on (B, =1: on the CPU too, where the probes are off). Graphs: torchvision
models traced here at --batch (eval, float32), or, with --cache-dir, the traced.pt/inputs.pt of
experiment_runner's cache entries for the models (the C++ models' own graphs).

--keep FOLDER keeps that folder of the Inductor cache directory from compile to compile (e.g.
benchmatrix_aoti_runtime, the runtime object built apart: what a sweep's shared caches keep), the
rest cold.

Prints a table per model and variant: the helper's wall seconds (process start to exit) and its
compile's phases (median, min-max over the rounds); writes one JSON line per compile to --out.
Usage: python bench/compile_helper_ab.py --device cpu --models resnet18 --rounds 3 --out ab.jsonl
On the CPU, TORCHINDUCTOR_VEC_ISA_OK=0 is set unless --cpu-isa-probes (the probes would dominate,
and headers are built ahead only where the ISA is known without them).
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "python")
PHASES = ("aoti_compile_s", "cpp_wrapper_compile_s", "cpp_kernel_compile_s", "cpp_other_s",
          "lowering_s", "cpp_link_s")


def traced_graphs(models, device, batch, cache_dir, work):
    """{model: (torchscript path, inputs path)}."""
    import torch

    graphs = {}
    for model in models:
        if cache_dir:
            sys.path.insert(0, HERE)
            from compile_time_anchor import entry_of

            entry = entry_of(cache_dir, model, device)
            if entry is None:
                sys.exit(f"compile_helper_ab: no {device} AOTInductor entry of {model} in "
                         f"{cache_dir}")
            graphs[model] = (os.path.join(entry, "traced.pt"), os.path.join(entry, "inputs.pt"))
            continue
        import torchvision

        module = getattr(torchvision.models, model)().eval().to(device)
        example = torch.randn(batch, 3, 224, 224, device=device)

        class Tupled(torch.nn.Module):  # the helper's contract: forward returns a tuple
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                return (self.inner(x),)

        with torch.no_grad():
            traced = torch.jit.trace(Tupled(module), (example,))
        paths = (os.path.join(work, f"{model}.pt"), os.path.join(work, f"{model}_inputs.pt"))
        traced.save(paths[0])
        torch.save((example.cpu(),), paths[1])
        graphs[model] = paths
    return graphs


def compile_once(model, graph, variant, setting, device, work, environment, kept=()):
    """One cold compile of `graph` with `setting` (NAME, VALUE; "" leaves NAME unset). The Inductor
    cache directory is empty but for `kept`: folders of it that persist from compile to compile
    (links to work/kept/NAME), as a sweep's shared compiler caches keep them."""
    cache = tempfile.mkdtemp(prefix=f"ab_{model}_{variant}_", dir=work)
    for name in kept:
        os.makedirs(os.path.join(work, "kept", name), exist_ok=True)
        os.symlink(os.path.join(work, "kept", name), os.path.join(cache, name))
    timings_path = os.path.join(cache, "timings.json")
    env = dict(environment, TORCHINDUCTOR_CACHE_DIR=cache,
               TRITON_CACHE_DIR=os.path.join(cache, "triton"))
    name, value = setting
    if value:
        env[name] = value
    else:
        env.pop(name, None)
    command = [sys.executable, "-m", "benchmatrix_compile", "--torchscript", graph[0],
               "--inputs", graph[1], "--device", device, "--out", os.path.join(cache, "m.pt2"),
               "--fresh-caches", "--timings-json", timings_path]
    started = time.perf_counter()
    try:
        helper = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        timings = None
        if helper.returncode == 0:
            with open(timings_path) as f:
                timings = json.load(f)
    finally:
        shutil.rmtree(cache, ignore_errors=True)  # its package and caches: hundreds of MB
    record = {"model": model, "variant": variant,
              "setting": f"{name}={value}" if value else f"{name} unset", "device": device,
              "host": socket.gethostname(),
              "timestamp": time.time(), "helper_wall_s": round(wall, 3)}
    if timings is None:
        record["error"] = helper.stderr[-2000:]
        return record
    record["aoti_compile_s"] = round(timings["aoti_compile_s"], 3)
    record.update(timings.get("breakdown_s", {}))
    for detail in ("headers_ahead", "runtime_apart"):  # what the setting under test did
        if detail in timings:
            record[detail] = timings[detail]
    return record


def spread(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--models", default="resnet18", help="comma-separated")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--a", default="BENCHMATRIX_HEADERS_AHEAD=0",
                        help="NAME=VALUE of variant A (NAME= : unset)")
    parser.add_argument("--b", default="BENCHMATRIX_HEADERS_AHEAD=1",
                        help="NAME=VALUE of variant B (NAME= : unset)")
    parser.add_argument("--cache-dir", default=None,
                        help="take the graphs from this experiment_runner --cache-dir")
    parser.add_argument("--cpu-isa-probes", action="store_true")
    parser.add_argument("--keep", action="append", default=[], metavar="FOLDER",
                        help="a folder of the Inductor cache directory kept from compile to "
                             "compile (repeatable; e.g. benchmatrix_aoti_runtime: the runtime "
                             "object as a sweep's shared caches keep it); the rest stays cold")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    settings = {}
    for variant, assignment in (("A", args.a), ("B", args.b)):
        if "=" not in assignment:
            parser.error(f"--{variant.lower()} {assignment!r}: expected NAME=VALUE or NAME=")
        settings[variant] = tuple(assignment.split("=", 1))
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.abspath(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]))
    if args.device == "cpu" and not args.cpu_isa_probes:
        environment["TORCHINDUCTOR_VEC_ISA_OK"] = "0"
    models = args.models.split(",")
    records = []
    with tempfile.TemporaryDirectory(prefix="compile_helper_ab_") as work, \
            open(args.out, "a") as out:
        graphs = traced_graphs(models, args.device, args.batch, args.cache_dir, work)
        for round_index in range(args.rounds):
            for model in models:
                for variant in (("A", "B") if round_index % 2 == 0 else ("B", "A")):
                    record = compile_once(model, graphs[model], variant, settings[variant],
                                          args.device, work, environment, args.keep)
                    record["round"] = round_index
                    records.append(record)
                    out.write(json.dumps(record) + "\n")
                    out.flush()
                    print(json.dumps(record), file=sys.stderr)
    print("| model | variant | helper wall s | " + " | ".join(PHASES) + " |")
    print("|---|---|---|" + "---|" * len(PHASES))
    for model in models:
        for variant in ("A", "B"):
            done = [r for r in records if r["model"] == model and r["variant"] == variant
                    and "error" not in r]
            if not done:
                print(f"| {model} | {variant} | failed | " + " | ".join("-" for _ in PHASES) + " |")
                continue
            cells = [spread([r.get(p, 0.0) for r in done]) for p in PHASES]
            print(f"| {model} | {variant} ({done[0]['setting']}) | "
                  f"{spread([r['helper_wall_s'] for r in done])} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
