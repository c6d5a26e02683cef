"""Where a warm hit's first call goes (issue 22): loads an inductor cache entry's AOTInductor
library (--loader below; `runner` as the runner's child does, backends/aoti_package.cpp: the
container runner over the extracted package/ folder, then the weights from the .blob) and times, in this fresh
process, the load, the first call and the calls after it. The timed child records only their
sum (`compile.preparation_s.first_call`: mobilenet_v3_large's was 3.30 s on an H100 (2026-11-24)
against 0.01-0.10 s for the other models); this probe takes it apart:
  --cudnn off      the same first call with cuDNN disabled (the package's convolutions are ATen
                   fallbacks, which then take ATen's native kernels): if the seconds go, they
                   were cuDNN's (its handle, its heuristics, or engines it compiles at run time
                   for the convolution's layout and dtype)
  --profile        the first call under torch.profiler (host and CUDA activity): the ATen ops
                   with the most host time in that call, on stderr
  --loader package  (default) the entry's model.pt2 through torch's own AOTIModelPackageLoader
                   (torch._inductor.aoti_load_package: the same runner, the package's weights file
                   loaded by torch); --loader runner builds the container runner over package/ as
                   the child does. CPU entries only, so far: on an H200 (2026-11-28) both died
                   with a segmentation fault in the CUDA runner's constructor for every CUDA
                   entry, in this Python process, while the C++ child loads the same entries
                   (bench/compile_time_gpu.sh firstcall takes a CUDA hit apart through the child).
  --eager NAME     no entry: torchvision's NAME built in this process (random weights, bfloat16,
                   --batch, 224x224 images) and its eager first forward timed instead, in
                   --memory-format contiguous or channels_last (Inductor's layout optimisation
                   gives a package's convolutions channels_last inputs; Python eager's first call,
                   measured on an H200 x4 on 2026-11-28, was contiguous)
One JSON line on stdout: {"model" (from the entry's manifest, or --eager's NAME), "source"
("package via <loader>" or "eager <memory format>"), "entry", "device", "cudnn", "load_s",
"first_call_s", "later_call_s" (median of --calls), "profile_top" (with --profile)}. Run each mode in its own
process (the first call is once per process).
Usage: python3 bench/first_call_probe.py ENTRY_DIR [--device cuda|cpu] [--cudnn on|off]
         [--profile] [--calls 5] [--loader package|runner]
       python3 bench/first_call_probe.py --eager NAME [--memory-format channels_last] [--batch 8] ...
  ENTRY_DIR: an inductor eval cache entry (package/ with the *.so, inputs.pt), e.g. from
  `experiment_runner ... --dynamo=inductor --cache-dir=DIR` (DIR/<key>/).
"""
import argparse
import contextlib
import glob
import json
import os
import statistics
import sys
import time


def fail(message):
    print(f"first_call_probe: {message}", file=sys.stderr)
    sys.exit(2)


def find_one(folder, pattern, what):
    found = sorted(glob.glob(os.path.join(folder, pattern)))
    if not found:
        fail(f"{folder} holds no {what} ({pattern}); expected an inductor cache entry's folder")
    return found[0]


def entry_model(entry):
    """The model an entry was compiled from: its manifest's description begins "model NAME;"
    (None where there is no manifest)."""
    path = os.path.join(entry, "manifest.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        description = json.load(f).get("description", "")
    return description.split(";")[0].removeprefix("model ").strip() or None


def load_entry(entry, loader, device):
    """(model name, a function running the entry's package on a list of tensors, its inputs)."""
    import torch

    package = os.path.join(entry, "package")
    if not os.path.isdir(package):
        fail(f"{entry} has no package/ folder; expected an inductor cache entry's folder")
    inputs = [x.to(device) for x in
              torch.load(find_one(entry, "inputs.pt", "example inputs"), weights_only=True)]
    if loader == "package":
        archive = find_one(entry, "model.pt2", "package archive")
        device_index = (device.index or 0) if device.type == "cuda" else -1
        compiled = torch._inductor.aoti_load_package(archive, run_single_threaded=True,
                                                     device_index=device_index)
        return entry_model(entry), compiled.loader.run, inputs
    library = find_one(package, "*.so", "wrapper library")
    if device.type == "cuda":
        runner = torch._C._aoti.AOTIModelContainerRunnerCuda(library, 1, str(device), package,
                                                             True)
    else:
        runner = torch._C._aoti.AOTIModelContainerRunnerCpu(library, 1)
    blobs = glob.glob(os.path.join(package, "*.blob"))
    if blobs and os.path.getsize(blobs[0]) > 0:
        runner.update_constant_buffer_from_blob(blobs[0])
    return entry_model(entry), runner.run, inputs


def build_eager(name, memory_format, batch, device):
    """(name, torchvision's NAME in bfloat16 on DEVICE as a function of a list of tensors, its
    inputs): random weights, eval, images of batch x 3 x 224 x 224."""
    import torch
    import torchvision

    if name not in torchvision.models.list_models():
        fail(f"--eager {name}: not a torchvision model (torchvision.models.list_models())")
    model = torchvision.models.get_model(name).eval().to(device=device, dtype=torch.bfloat16)
    images = torch.randn(batch, 3, 224, 224, device=device, dtype=torch.bfloat16)
    if memory_format == "channels_last":
        model = model.to(memory_format=torch.channels_last)
        images = images.contiguous(memory_format=torch.channels_last)
    return name, lambda inputs: model(*inputs), [images]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("entry", nargs="?", help="an inductor eval cache entry folder")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--cudnn", default="on", choices=["on", "off"])
    parser.add_argument("--profile", action="store_true",
                        help="profile the first call; its top ATen ops by host time on stderr")
    parser.add_argument("--calls", type=int, default=5, help="calls timed after the first")
    parser.add_argument("--loader", default="package", choices=["package", "runner"])
    parser.add_argument("--eager", metavar="NAME", help="a torchvision model instead of an entry")
    parser.add_argument("--memory-format", default="contiguous",
                        choices=["contiguous", "channels_last"])
    parser.add_argument("--batch", type=int, default=8, help="--eager's batch size")
    args = parser.parse_args()
    if args.calls < 1:
        parser.error("--calls must be at least 1")
    if (args.entry is None) == (args.eager is None):
        parser.error("give either an entry folder or --eager NAME")

    import torch

    torch.backends.cudnn.enabled = args.cudnn == "on"
    device = torch.device("cuda:0" if args.device == "cuda" else "cpu")

    def synchronize():
        if device.type == "cuda":
            torch.cuda.synchronize()

    synchronize()
    started = time.perf_counter()
    if args.eager:
        model, run, inputs = build_eager(args.eager, args.memory_format, args.batch, device)
    else:
        model, run, inputs = load_entry(args.entry, args.loader, device)
    synchronize()
    load_s = time.perf_counter() - started

    profiler = None
    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        profiler = profile(activities=[ProfilerActivity.CPU] + (
            [ProfilerActivity.CUDA] if device.type == "cuda" else []))
    with torch.no_grad():
        with profiler if profiler is not None else contextlib.nullcontext():
            started = time.perf_counter()
            run(inputs)
            synchronize()
            first_call_s = time.perf_counter() - started
        later = []
        for _ in range(args.calls):
            started = time.perf_counter()
            run(inputs)
            synchronize()
            later.append(time.perf_counter() - started)
    profile_top = None
    if profiler is not None:
        averages = profiler.key_averages()
        print(averages.table(sort_by="self_cpu_time_total", row_limit=15), file=sys.stderr)
        profile_top = [{"op": e.key, "calls": e.count,
                        "self_host_ms": round(e.self_cpu_time_total / 1000, 3)}
                       for e in sorted(averages, key=lambda e: -e.self_cpu_time_total)[:10]]
    print(json.dumps({"model": model, "source": ("eager " + args.memory_format if args.eager
                                                 else "package via " + args.loader),
                      "entry": os.path.abspath(args.entry) if args.entry else None,
                      "device": str(device),
                      "cudnn": args.cudnn, "load_s": round(load_s, 4),
                      "first_call_s": round(first_call_s, 4),
                      "later_call_s": round(statistics.median(later), 5),
                      "profile_top": profile_top}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
