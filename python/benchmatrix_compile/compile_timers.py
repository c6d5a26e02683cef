"""Where an AOTInductor compile's time goes, for the compile helper's breakdown (issue 22).

Sources: Inductor's own timers (torch._dynamo.utils.compilation_time_metrics: the dynamo_timed
regions, seconds per call) and a wrapper around torch._inductor.cpp_builder.CppBuilder.build, the
one place that runs the C++ compiler (g++) for AOTInductor's wrapper, kernels, weights, link and
precompiled headers, and for the CPU's ISA probes. The phases (seconds of wall time; they add up to
the compile's wall time), after the helper's own (__main__.py): service_s (only in a compile the
compile service ran: from the client's request to the fork, the service's import of torch when
the request waited for it, else about 0), import_s (the helper's
imports: in a served compile only what the service had not imported), export_s:

  lowering_s              FX passes, AOT dispatch, freezing, GraphLowering.run (with freezing on,
                          Inductor's forward compiler is fw_compiler_freezing, which Inductor does
                          not time: timed here, else its lowering fell into packaging_s)
  codegen_s               kernel and wrapper code generation (GraphLowering.codegen) less the
                          Triton compile, autotuning and C++ builds that run inside it
  triton_compile_s        Triton kernels compiled (async_compile.precompile / async_compile.wait)
  autotune_s              template autotuning and config benchmarking (max-autotune, GEMMs)
  cpp_wrapper_compile_s   g++ of the generated wrapper (AOTI's run_impl: the largest source)
  cpp_kernel_compile_s    g++ of the generated CPU kernels (the CPU's counterpart of Triton)
  cpp_link_s              the weights' object and the link of the model's shared library
  cpp_other_s             precompiled headers (cached in the Inductor cache directory): their
                          build, or the wait for the ones built ahead (headers_ahead.py), whose
                          builds on that thread are beside the phases, not in them
  isa_probe_s             the CPU vector-ISA probes (build and load, isa_probe_cache.py): once
                          per machine and torch with the persistent caches, else in every compile
  packaging_s             the rest of the call: preparing the exported program, writing the .pt2
"""

import contextlib
import threading
import time

# Inductor timer names (dynamo_timed) summed into a phase; names ending in a suffix listed under
# "suffixes" are matched by suffix (select_algorithm names its regions f"{name}_template_...").
_TRITON = ("async_compile.precompile", "async_compile.wait")
_AUTOTUNE = ("CachingAutotuner.benchmark_all_configs", "CachingAutotuner.coordinate_descent_tuning")
_AUTOTUNE_SUFFIXES = ("_template_autotuning", "_template_precompiling")
# Inductor's forward compilers: fw_compiler_base times itself, the freezing one is timed by
# CompileTimer.freezing_compiler under this name.
_FORWARD_COMPILER = "compile_fx.<locals>.fw_compiler_base"
FREEZING_COMPILER = "benchmatrix.fw_compiler_freezing"


def is_wrapper_object(builder):
    """Whether a CppBuilder compiles AOTInductor's wrapper source into its object (not the link of
    the library, also named ".wrapper")."""
    return (str(getattr(builder, "_name", "")).endswith(".wrapper")
            and str(getattr(builder, "_target_file", "")).endswith(".o"))


def _classify_build(builder):
    """The phase of one CppBuilder.build (its target's name says what AOTI builds)."""
    name = str(getattr(builder, "_name", ""))
    target = str(getattr(builder, "_target_file", ""))
    if is_wrapper_object(builder):
        return "cpp_wrapper_compile_s"
    if name.endswith(".kernel") and target.endswith(".o"):
        return "cpp_kernel_compile_s"
    if name.endswith(".weights") or target.endswith(".so"):
        return "cpp_link_s" if name.endswith((".wrapper", ".weights")) else "cpp_other_s"
    return "cpp_other_s"


class CompileTimer:
    """Collects the C++ builds while active (`with timer.cpp_builds():`) and turns Inductor's
    timers into the phase breakdown (`phases(total_s)`). `builds` keeps every C++ build as
    (phase, name, seconds, inside AotCodeCompiler.compile) for the compile log."""

    def __init__(self):
        self.builds = []
        self.isa_probe_s = {"codegen": 0.0, "aot": 0.0}  # where the probes ran (see phases)
        self._probing = False
        self._in_aot_compile = False
        self._compiling_thread = None  # the thread that entered cpp_builds()

    def reset(self):
        """Forgets what was measured (a compile that is retried measures the retry)."""
        self.builds.clear()
        self.isa_probe_s = {"codegen": 0.0, "aot": 0.0}

    @contextlib.contextmanager
    def isa_probe(self):
        """Counts the time inside as isa_probe_s (the C++ build of the probe included)."""
        started = time.perf_counter()
        self._probing = True
        try:
            yield
        finally:
            self._probing = False
            where = "aot" if self._in_aot_compile else "codegen"
            self.isa_probe_s[where] += time.perf_counter() - started

    @contextlib.contextmanager
    def freezing_compiler(self):
        """Times Inductor's forward compiler under freezing (compile_fx.fw_compiler_freezing) as
        the Inductor timer FREEZING_COMPILER: torch 2.11 times fw_compiler_base but not its
        freezing counterpart, which _compile_fx_main looks up when it builds the compiler."""
        from torch._dynamo.utils import dynamo_timed
        from torch._inductor import compile_fx

        original = compile_fx.fw_compiler_freezing

        def timed_freezing_compiler(*args, **kwargs):
            with dynamo_timed(FREEZING_COMPILER):
                return original(*args, **kwargs)

        compile_fx.fw_compiler_freezing = timed_freezing_compiler
        try:
            yield
        finally:
            compile_fx.fw_compiler_freezing = original

    @contextlib.contextmanager
    def cpp_builds(self):
        from torch._inductor import cpp_builder

        from torch._inductor import codecache

        original = cpp_builder.CppBuilder.build
        original_aot_compile = codecache.AotCodeCompiler.compile  # bound to the class
        aot_compile_descriptor = codecache.AotCodeCompiler.__dict__["compile"]  # the classmethod
        timer = self
        timer._compiling_thread = threading.current_thread()

        def timed_build(builder):
            started = time.perf_counter()
            try:
                return original(builder)
            finally:
                if threading.current_thread() is not timer._compiling_thread:
                    phase = "ahead"  # headers_ahead.py's thread: beside the phases, logged only
                elif timer._probing:
                    phase = "isa_probe_s"
                else:
                    phase = _classify_build(builder)
                timer.builds.append((phase, str(builder._name), time.perf_counter() - started,
                                     timer._in_aot_compile))

        def marked_aot_compile(*args, **kwargs):
            timer._in_aot_compile = True
            try:
                return original_aot_compile(*args, **kwargs)
            finally:
                timer._in_aot_compile = False

        cpp_builder.CppBuilder.build = timed_build
        codecache.AotCodeCompiler.compile = marked_aot_compile
        try:
            yield
        finally:
            cpp_builder.CppBuilder.build = original
            codecache.AotCodeCompiler.compile = aot_compile_descriptor

    def phases(self, total_s, headers_waited_s=0.0):
        """{phase: seconds} of an AOTI compile that took `total_s` of wall time, of which it waited
        `headers_waited_s` for headers built ahead (headers_ahead.py)."""
        from torch._dynamo.utils import compilation_time_metrics

        def timed(*names):
            return sum(sum(compilation_time_metrics.get(name, [])) for name in names)

        def timed_suffix(suffixes):
            return sum(sum(times) for name, times in compilation_time_metrics.items()
                       if name.endswith(suffixes))

        phases = {name: 0.0 for name in ("cpp_wrapper_compile_s", "cpp_kernel_compile_s",
                                         "cpp_link_s", "cpp_other_s")}
        builds_in = {True: 0.0, False: 0.0}  # C++ build seconds in AotCodeCompiler.compile or not
        for phase, _, seconds, in_aot_compile in self.builds:
            if phase in phases:  # the probes' builds are in isa_probe_s
                phases[phase] += seconds
                builds_in[in_aot_compile] += seconds
        # The wait for headers built ahead is inside AotCodeCompiler.compile, where their build
        # would have been.
        phases["cpp_other_s"] += headers_waited_s
        builds_in[True] += headers_waited_s
        triton = timed(*_TRITON)
        autotune = timed(*_AUTOTUNE) + timed_suffix(_AUTOTUNE_SUFFIXES)
        compile_to_fn = timed("GraphLowering.compile_to_fn")
        codegen = timed("GraphLowering.codegen")
        phases["triton_compile_s"] = triton
        phases["autotune_s"] = autotune
        # The ISA probes run where a CPU kernel or the AOT compile first asks for the vector ISA.
        phases["isa_probe_s"] = self.isa_probe_s["codegen"] + self.isa_probe_s["aot"]
        phases["codegen_s"] = max(0.0, codegen - triton - autotune - builds_in[False] -
                                  self.isa_probe_s["codegen"])
        # Lowering: pre-grad passes and AOT dispatch before the forward compiler, then in it the
        # joint/post-grad passes, freezing and GraphLowering.run (all but compile_to_fn).
        phases["lowering_s"] = max(0.0, timed("_recursive_pre_grad_passes",
                                              "create_aot_dispatcher_function") +
                                   timed(_FORWARD_COMPILER, FREEZING_COMPILER) - compile_to_fn)
        # compile_to_fn besides codegen is AotCodeCompiler.compile: its C++ builds (headers,
        # wrapper, kernels, link) plus its Python side (writing sources and the weights' blob),
        # which counts with the link.
        phases["cpp_link_s"] += max(0.0, compile_to_fn - codegen - builds_in[True] -
                                    self.isa_probe_s["aot"])
        # The rest of the call: export's preparation and writing the .pt2 package.
        phases["packaging_s"] = max(0.0, total_s - sum(phases.values()))
        return {name: round(seconds, 3) for name, seconds in phases.items()}
