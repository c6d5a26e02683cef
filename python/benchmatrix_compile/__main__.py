"""Compile helper of experiment_runner's inductor backend (run as `python -m benchmatrix_compile`).

Input: a TorchScript file whose forward(self, *tensors) returns a tuple of tensors (the C++ model
traced by LibTorch) and the example tensors it was traced with (torch.save'd tuple, CPU); or, for
the forward (not --train) as AOTInductor packages, --exported: a torch.export package
(torch.export.save's archive: an imported model's or a user's .pt2, on the run's device), compiled
as it is, without the TorchScript round trip.
Output: an AOTInductor package (torch._inductor.aoti_compile_and_package) that
torch::inductor::AOTIModelPackageLoader runs in the child; or, with --format=stablehlo, a StableHLO
module plus weights and compile options for the XLA/PJRT backend (stablehlo.py says what is written).

Path: torch.jit.load -> in-place ops on unaliased values made out-of-place (mutations_removed.py)
-> torch._export.converter.TS2EPConverter (static shapes) -> ExportedProgram
-> aoti_compile_and_package; --exported: torch.export.load -> aoti_compile_and_package. Exit status 0 on success; on failure the traceback is on stderr and the
status is 1 (2 for bad arguments, 3 for a torch version that differs from the child's LibTorch,
4 when --train cannot export the model's train step).
"""

import argparse
import contextlib
import json
import os
import sys
import time

from benchmatrix_compile.compile_timers import CompileTimer
from benchmatrix_compile.headers_ahead import HeadersAhead
from benchmatrix_compile import runtime_apart
from benchmatrix_compile.isa_probe_cache import remembered_isa_probes
from benchmatrix_compile.user_cache import user_cache_directory
from benchmatrix_compile.mutations_removed import remove_mutations
from benchmatrix_compile.shared_constant_reads import shared_constant_reads_merged
from benchmatrix_compile.switches import switch


def parse_arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmatrix_compile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    program = parser.add_mutually_exclusive_group(required=True)
    program.add_argument("--torchscript", help="TorchScript file to compile")
    program.add_argument("--exported",
                         help="torch.export package (.pt2) to compile as it is (the forward as an "
                              "AOTInductor package only)")
    parser.add_argument("--inputs", required=True, help="torch.save'd tuple of example tensors")
    parser.add_argument("--device", required=True, choices=["cpu", "cuda"],
                        help="device the package is compiled for")
    parser.add_argument("--out", required=True,
                        help="path of the .pt2 package to write (--format=stablehlo: a directory)")
    parser.add_argument("--format", default="aoti", choices=["aoti", "stablehlo"],
                        help="aoti: an AOTInductor package; stablehlo: the XLA/PJRT export")
    parser.add_argument("--train", action="store_true",
                        help="compile the joint train step (train_step.py) instead of the forward; "
                             "the TorchScript then takes the inputs, parameters and buffers (with "
                             "--format=stablehlo: the step exported to StableHLO, stablehlo.py)")
    parser.add_argument("--state", default=None,
                        help="--train: torch.save'd tuple of the parameters, then the buffers")
    parser.add_argument("--parameter-count", type=int, default=None,
                        help="--train: how many of the --state tensors are parameters")
    parser.add_argument("--loss-structure", default=None,
                        help="--train: the output's nesting as JSON lists of leaf indices, e.g. "
                             "[0, [1, 2]]; the loss is the mean at each level (default: one list "
                             "of all leaves)")
    parser.add_argument("--amp", action="store_true",
                        help="--train: the forward was traced under float16 autocast; the loss "
                             "sums in float32 as autocast does")
    parser.add_argument("--inductor-mode", default="default", choices=sorted(INDUCTOR_MODES),
                        help="Inductor's mode, as torch.compile's mode= sets it (the runner's "
                             "--inductor-mode): default, or max-autotune (max_autotune and "
                             "coordinate_descent_tuning; CUDA graphs are the runner's own)")
    parser.add_argument("--expect-torch-version", default=None,
                        help="the LibTorch version of the child; the package must match it")
    parser.add_argument("--fresh-caches", action="store_true",
                        help="the Inductor cache directory is this compile's alone (the runner's "
                             "--cold-start): no precompiled headers (precompiled_headers says why)")
    parser.add_argument("--timings-json", default=None,
                        help="also write the timings (seconds per phase, compile_timers.py) here")
    args = parser.parse_args(argv)
    if args.train and (args.state is None or args.parameter_count is None):
        parser.error("--train needs --state and --parameter-count")
    if args.exported and (args.train or args.format != "aoti"):
        parser.error("--exported compiles a forward into an AOTInductor package: not with --train "
                     "or --format=stablehlo")
    return args


@contextlib.contextmanager
def static_shapes_in_ts2ep():
    """TS2EPConverter re-traces its graph with Dim.AUTO on every dimension of every input, i.e.
    dynamic shapes: Inductor then generates shape-generic kernels (slower), and the shape solver
    fails on some models (LearningToPaint: "Eq(512*(((x/32)//4)) - 512, 0) cannot be solved"). A
    benchmark compiles for the example's shapes, as torch.compile does by default, so for the
    conversion the converter's Dim.AUTO is Dim.STATIC."""
    from torch._export import converter
    from torch.export import Dim

    if getattr(converter, "Dim", None) is not Dim:
        raise RuntimeError("benchmatrix_compile: torch._export.converter no longer uses "
                           "torch.export.Dim; update static_shapes_in_ts2ep for this torch")

    class StaticDim:
        AUTO = Dim.STATIC

    converter.Dim = StaticDim
    try:
        yield
    finally:
        converter.Dim = Dim


def attention_for(output_format):
    """StableHLO: scaled_dot_product_attention exported in its math form. Exported on CUDA it would
    become one of the fused CUDA kernels (cudnn, flash, efficient attention), which have no JAX
    lowering in torchax (hf_Bert, nanogpt); XLA fuses the math form itself. Inductor keeps them."""
    import contextlib

    if output_format != "stablehlo":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.MATH])


def headers_directory(fresh_caches):
    """Where Inductor's precompiled headers live. torch 2.11 puts them in default_cache_dir()
    (/tmp/torchinductor_$USER) whatever TORCHINDUCTOR_CACHE_DIR says, so --cold-start's empty
    caches kept them warm. With --fresh-caches they go in that empty Inductor cache directory;
    otherwise in this user's cache ($XDG_CACHE_HOME/benchmatrix/inductor_headers), for every
    compile cache: a header's file is named by the hash of its compile command, its preprocessed
    text and the compiler (Inductor's _precompile_header) and built under a lock, so any cache may
    share it, and each new --cache-dir (by default one per output directory) no longer builds
    them again (about 20 s of a CPU compile on the 2-core build machine, issue 48)."""
    from torch._inductor import codecache
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    if not hasattr(codecache, "_HEADER_DIR") or not hasattr(codecache, "_HEADER_LOCK_DIR"):
        raise RuntimeError("benchmatrix_compile: torch._inductor.codecache no longer has "
                           "_HEADER_DIR/_HEADER_LOCK_DIR; update headers_directory for this "
                           "torch")
    codecache._HEADER_DIR = (os.path.join(cache_dir(), "precompiled_headers") if fresh_caches
                             else user_cache_directory("inductor_headers"))
    codecache._HEADER_LOCK_DIR = os.path.join(codecache._HEADER_DIR, "locks")


def precompiled_headers(fresh_caches, built_ahead):
    """Inductor precompiles the wrapper's (and on the CPU the kernels') headers into its cache
    directory, a build that pays off only when later compiles reuse it: in a sweep's shared
    compiler caches the first compile builds them for all. With --fresh-caches (--cold-start) the
    cache directory is removed after this one compile, so where the headers would be built inside
    the compile the wrapper and kernel builds parse them themselves instead: on a 2-core CPU
    (resnet18) the headers took 8.7 s and the wrapper and kernel builds 6.0 s with them, 11.7 s
    without. Headers `built_ahead` (headers_ahead.py) are built beside export and lowering, off
    the critical path, so they are used with fresh caches too. The object code is the same either
    way (same sources and flags), so the package cache key does not depend on it."""
    import torch

    if fresh_caches and not built_ahead:
        torch._inductor.config.aot_inductor.precompile_headers = False


def wrapper_opt_level(device):
    """The optimisation level of the package's wrapper (AOTInductor's run_impl; Inductor's default
    O1). A CUDA forward package's wrapper only launches kernels, and the runner replays it under a
    CUDA graph (the timed step and the verifier), so the wrapper's own speed is off the timed path:
    CUDA forward packages build it at O0, which cut the wrapper's g++ from 4.1 to 2.9 s on a CPU
    resnet18 (the CUDA wrapper is larger). CPU packages and train steps (which can fall back to
    running without a CUDA graph) keep Inductor's default. AOT_INDUCTOR_COMPILE_WRAPPER_OPT_LEVEL,
    when set, decides, as Inductor documents it (the runner keys the package cache by it).
    Returns the level used."""
    import torch

    config = torch._inductor.config.aot_inductor
    if device == "cuda" and os.environ.get("AOT_INDUCTOR_COMPILE_WRAPPER_OPT_LEVEL") is None:
        config.compile_wrapper_opt_level = "O0"
    return config.compile_wrapper_opt_level


def weights_beside_library():
    """AOTInductor links a package's weights (the graph's constants, the folded ones under
    freezing) into its wrapper library by default: a generated object of all their bytes, linked
    into the .so. Written instead as one file beside the library
    (aot_inductor.package_constants_on_disk_format "binary_blob", which the runner's loader
    hands to AOTInductor's update_constant_buffer_from_blob: backends/aoti_package.cpp), the link
    no longer copies them: hf_GPT2's CPU package (240 MB of weights) linked in 1.35 s against
    2.35-2.42 s (2 cores; BENCHMARKS.md). The package holds the same bytes either way.
    BENCHMATRIX_WEIGHTS_IN_LIBRARY=1 keeps Inductor's default (the runner keys the package cache by
    it). Returns whether the weights are in a file of their own."""
    import torch

    if switch("BENCHMATRIX_WEIGHTS_IN_LIBRARY", "0 or unset (a file of their own), 1 (weights "
              "linked into the library, Inductor's default)") == "1":
        return False
    torch._inductor.config.aot_inductor.package_constants_on_disk_format = "binary_blob"
    return True


def headers_served(headers_ahead):
    """While active, Inductor's precompiled headers come from `headers_ahead` (None: as Inductor
    builds them)."""
    return headers_ahead.serving() if headers_ahead else contextlib.nullcontext()


def runtime_built_apart():
    """A RuntimeApart (runtime_apart.py) for this AOTInductor compile, unless
    BENCHMATRIX_RUNTIME_APART=0; else None. Its object cache is in the Inductor cache directory."""
    if not runtime_apart.enabled():
        return None
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    return runtime_apart.RuntimeApart(cache_dir())


def runtime_split(apart):
    """While active, AOTInductor's wrapper builds leave its runtime to `apart` (None: whole, as
    Inductor builds them). Entered before CompileTimer.cpp_builds, so that the timer's
    cpp_wrapper_compile_s is the split build's."""
    return apart.active() if apart else contextlib.nullcontext()


def compile_package(exported, out, freezing):
    import torch

    torch._inductor.config.freezing = freezing
    with torch.no_grad():
        torch._inductor.aoti_compile_and_package(exported, package_path=out)


def report(timings, path, headers_ahead=None, apart=None):
    """The timings line on stdout (the cache entry's compile.log) and, if asked, as a JSON file;
    with the headers built ahead, if any (headers_ahead.HeadersAhead.report), and the wrapper
    builds that left the runtime apart, if any (runtime_apart.RuntimeApart.report)."""
    if headers_ahead:
        timings["headers_ahead"] = headers_ahead.report()
    if apart:
        timings["runtime_apart"] = apart.report()
    line = json.dumps(timings)
    print("benchmatrix_compile: " + line)
    if path:
        with open(path, "w") as f:
            f.write(line + "\n")


def no_cpu_isa_probes_for_cuda(device):
    """A CUDA package's C++ is host code (the wrapper that launches the Triton kernels), yet every
    AOTInductor compile asks pick_vec_isa() which CPU vector ISA to build it for, and that runs up
    to six probes, each a C++ build against ATen's vector headers plus a Python that imports torch
    to load it: 57-60 s of a 110 s cold resnet50/hf_GPT2 compile on the H100 host (compile.breakdown_s
    isa_probe_s). Python's torch.compile pays none of it (its wrapper is Python). On CUDA the
    wrapper is built without vector flags instead; a CPU kernel in a CUDA graph (rare: a fallback
    on a CPU scalar) would then be scalar code, slower but correct. TORCHINDUCTOR_VEC_ISA_OK, when
    set, decides as Inductor documents it. CPU packages keep the probes: their kernels need the ISA."""
    import torch

    if device == "cuda" and os.environ.get("TORCHINDUCTOR_VEC_ISA_OK") is None:
        torch._inductor.config.cpp.vec_isa_ok = False


def triton_compile_pool_started_early(device):
    """Inductor compiles Triton kernels in a pool of worker processes, each importing torch, and
    compiles in the calling process until that pool is ready. torch.compile starts the pool when
    it creates its Inductor backend (maybe_warm_pool), before Dynamo traces; AOTInductor starts it
    at the first kernel, so in a fresh helper most kernels compiled one at a time. A CUDA compile
    starts it now, and export and lowering run while its workers import torch. CPU packages have no
    Triton kernels, so none is started for them (its workers would only take the CPU)."""
    if device == "cuda":
        from torch._inductor.async_compile import maybe_warm_pool

        maybe_warm_pool()


def served_by_service():
    """In a process the compile service forked (python -m benchmatrix_service, which had imported
    torch): {"service_s": seconds from the client's request to the fork, the service's own imports
    when the request waited for them}; else None."""
    service = sys.modules.get("benchmatrix_service")
    return getattr(service, "SERVED", None)


# --inductor-mode -> the Inductor config values it sets: torch.compile's mode="max-autotune" (its
# list_mode_options) less "triton.cudagraphs", since the runner replays the package in a CUDA graph
# itself in every mode.
INDUCTOR_MODES = {
    "default": {},
    "max-autotune": {"max_autotune": True, "coordinate_descent_tuning": True},
}


def apply_inductor_mode(mode):
    """Sets the Inductor config of `mode` (INDUCTOR_MODES) for every compile of this process."""
    import torch._inductor.config as inductor_config

    for name, value in INDUCTOR_MODES[mode].items():
        setattr(inductor_config, name, value)


def main(argv=None):
    args = parse_arguments(argv)
    served = served_by_service()
    # "service": forked from the compile service, whose imports import_s no longer holds (they are
    # in service_s for the request that started them, else were paid by an earlier compile).
    timings = {"helper": "service" if served else "process"}
    started = time.perf_counter()
    import torch
    from torch._export.converter import TS2EPConverter

    if args.expect_torch_version and not torch.__version__.startswith(args.expect_torch_version):
        print(f"benchmatrix_compile: this Python's torch is {torch.__version__}, but the child's "
              f"LibTorch is {args.expect_torch_version}; AOTInductor packages only load in the "
              "version that compiled them. Set BENCHMATRIX_PYTHON to a Python with torch=="
              f"{args.expect_torch_version}.", file=sys.stderr)
        return 3
    no_cpu_isa_probes_for_cuda(args.device)
    apply_inductor_mode(args.inductor_mode)
    timings["inductor_mode"] = args.inductor_mode
    headers_ahead = apart = None
    if args.format == "aoti" and HeadersAhead.applies(args.device):
        headers_ahead = HeadersAhead(args.device)
    precompiled_headers(args.fresh_caches, built_ahead=headers_ahead is not None)
    triton_compile_pool_started_early(args.device)  # imports Triton: counted with the imports
    if args.format == "aoti":
        timings["weights_file"] = weights_beside_library()  # before the headers' prediction
        headers_directory(args.fresh_caches)
        apart = runtime_built_apart()
        if not args.train:  # the wrapper's level is in the header's flags: set before the start
            timings["wrapper_opt_level"] = wrapper_opt_level(args.device)
    if headers_ahead:
        headers_ahead.start()  # after the Triton pool's start: no thread of ours at its fork
    timings["import_s"] = time.perf_counter() - started
    breakdown = {"service_s": served["service_s"]} if served else {}
    breakdown["import_s"] = round(timings["import_s"], 3)

    if args.train and args.format == "stablehlo":
        from benchmatrix_compile.stablehlo import export_train_stablehlo

        timings.update(export_train_stablehlo(args, static_shapes_in_ts2ep,
                                              lambda: attention_for(args.format)))
        report(timings, args.timings_json)
        return 0

    if args.train:
        from benchmatrix_compile.train_step import compile_train_step

        # The train step's compile asks for the CPU's vector ISAs as the forward's does: the same
        # remembered answers (without them every CPU train compile probed them all again).
        with runtime_split(apart), headers_served(headers_ahead), \
                remembered_isa_probes(CompileTimer(), args.fresh_caches):
            timings.update(compile_train_step(args, static_shapes_in_ts2ep))
        report(timings, args.timings_json, headers_ahead, apart)
        return 0

    t = time.perf_counter()
    # StableHLO for cuda is exported on the GPU where there is one (a model traced on CUDA keeps
    # CUDA tensor constants that map_location does not move); elsewhere from CPU tensors.
    load_device = args.device
    if args.format == "stablehlo" and not (args.device == "cuda" and torch.cuda.is_available()):
        load_device = "cpu"

    def export():
        if args.exported:
            timings["program"] = "torch.export package"
            return torch.export.load(args.exported)
        timings["program"] = "TorchScript, converted by TS2EPConverter"
        module = torch.jit.load(args.torchscript, map_location=load_device)
        example = tuple(x.to(load_device) for x in torch.load(args.inputs, weights_only=True))
        timings["mutations_removed"] = remove_mutations(module)
        with static_shapes_in_ts2ep(), attention_for(args.format):
            return TS2EPConverter(module, example).convert()

    exported = export()
    timings["export_s"] = time.perf_counter() - t
    breakdown["export_s"] = round(timings["export_s"], 3)

    if args.format == "stablehlo":
        from benchmatrix_compile.stablehlo import export_stablehlo

        t = time.perf_counter()
        example = tuple(torch.load(args.inputs, weights_only=True))
        with attention_for(args.format):  # torchax decomposes the program again while lowering
            timings.update(export_stablehlo(exported, example, args.device, args.out))
        timings["stablehlo_export_s"] = time.perf_counter() - t
        report(timings, args.timings_json)
        return 0

    t = time.perf_counter()
    # The traced weights are graph constants, which is exactly what Inductor's freezing assumes: on
    # CUDA it folds them (BatchNorm into convolutions, conv weights into channels-last once, instead
    # of a layout copy per call). The CPU keeps the defaults (freezing there repacks for oneDNN).
    # Freezing's constant folding deletes a constant that another node still reads (torch 2.11;
    # "references nonexistent attribute _tensor_constantN": nanogpt, mobilenet_v3_large, every
    # BERT-like huggingface program on CUDA) unless such reads are merged first
    # (shared_constant_reads.py). A program whose freezing still fails compiles without it, which
    # the timings line records as "freezing": false with the failure.
    timings["freezing"] = args.device == "cuda"
    timer = CompileTimer()
    with runtime_split(apart), timer.cpp_builds(), timer.freezing_compiler(), \
            remembered_isa_probes(timer, args.fresh_caches), headers_served(headers_ahead), \
            shared_constant_reads_merged():
        try:
            compile_package(exported, args.out, freezing=timings["freezing"])
        except Exception as error:
            if not timings["freezing"]:
                raise
            # The failure is the FX graph lint after freezing's constant folding, before any
            # lowering or code generation: the failed attempt costs the passes up to freezing,
            # recorded as failed_freezing_attempt_s; the conversion is redone (export_s includes
            # it), since the failed pass may have edited the exported program in place.
            failed_s = time.perf_counter() - t
            message = str(error).splitlines()[0] if str(error) else ""
            print(f"benchmatrix_compile: compiling with Inductor freezing failed after "
                  f"{failed_s:.1f} s ({type(error).__name__}: {message}); compiling without "
                  "freezing", file=sys.stderr)
            timings["freezing"] = False
            timings["freezing_failure"] = f"{type(error).__name__}: {message}"
            breakdown["failed_freezing_attempt_s"] = round(failed_s, 3)
            reexport_started = time.perf_counter()
            exported = export()
            breakdown["export_s"] += round(time.perf_counter() - reexport_started, 3)
            torch._dynamo.utils.compilation_time_metrics.clear()  # the retry's timers only
            timer.reset()
            t = time.perf_counter()
            compile_package(exported, args.out, freezing=False)
    timings["aoti_compile_s"] = time.perf_counter() - t
    breakdown.update(timer.phases(time.perf_counter() - t,
                                  headers_ahead.waited_s if headers_ahead else 0.0))
    timings["compile_threads"] = torch._inductor.config.compile_threads
    timings["breakdown_s"] = breakdown
    for phase, name, seconds, _ in timer.builds:  # the compile log's detail of the C++ phases
        print(f"benchmatrix_compile: C++ build {name} ({phase}): {seconds:.2f} s")
    report(timings, args.timings_json, headers_ahead, apart)
    return 0


if __name__ == "__main__":
    sys.exit(main())
