"""Inductor's precompiled headers built ahead, beside export and lowering (issue 22).

An AOTInductor compile builds its C++ wrapper (and on the CPU its kernels) at the very end, after
lowering and the Triton compile, and before that precompiles the wrapper's header (AOTInductor's
runtime and ATen's shim: on a 2-core CPU 8.7 s for resnet18's two headers, and CUDA's
aoti_include/cuda.h alone took 2.8 s to parse in a plain g++ -c of an empty source) when
aot_inductor.precompile_headers is on. Nothing in that header depends on the model: which header
and with which flags follows from the device, the vector ISA and Inductor's settings. So the
helper starts building it on a second thread right after its imports (the builds are g++
processes: the thread waits outside the GIL), and when AotCodeCompiler asks for the header the
answer is ready or nearly so: the precompile leaves the compile's critical path, and the wrapper
build still parses no headers. That is what lets a --cold-start compile (an empty cache directory,
where a header built inside the compile did not pay for itself) use precompiled headers too.

Ahead by default for CUDA packages, where the ISA is known without probes (the helper turns the
CPU's vector-ISA probes off for them, __main__.no_cpu_isa_probes_for_cuda), there is one header
(the wrapper's), and export, lowering and the Triton compile before the wrapper build take 10 s
and more on the H100 host's 16 cores. Not by default on the CPU: a CPU compile needs two headers
(wrapper and kernels), which on the idle 2-core build machine took 8-10 s on the thread against
4-5 s of export and lowering before the builds, so resnet18's cold compile took 18.2 s against
15.5 s without, mobilenet_v3_large's broke even (BENCHMARKS.md, bench/compile_helper_ab.py); a
CPU compile that probes its ISA would also move the probes onto the thread beside its own.
BENCHMATRIX_HEADERS_AHEAD=1 builds them ahead on the CPU too where the probes are off
(TORCHINDUCTOR_VEC_ISA_OK=0), =0 nowhere.

The prediction is checked, not trusted: AotCodeCompiler's request is compared with the header
built ahead (header, command line, flags) and answered from it only when they are equal; any other
request is built by Inductor as before, and the record says so (`report()["used"]`).
"""

import threading
import time

from benchmatrix_compile.switches import switch


class HeadersAhead:
    """The precompiled headers of one AOTInductor compile for `device` ("cpu" or "cuda"), built on
    a background thread from start() on. While `serving()` is active, Inductor's requests for them
    wait for that thread instead of building them again."""

    def __init__(self, device):
        self.device = device
        self._requests = []  # (header, hashable command line, keyword arguments) built ahead
        self._results = {}  # request index -> the header's path
        self._error = None  # the thread's exception, if it failed
        self._thread = None
        self._built_s = 0.0  # seconds the thread spent (overlapped with the compile)
        self.waited_s = 0.0  # seconds the compile waited for the thread (on its critical path)
        self._served = 0  # requests answered from the thread
        self._not_predicted = []  # headers Inductor asked for with other flags

    @staticmethod
    def applies(device):
        """Whether this compile builds its headers ahead (see the module's text): CUDA, unless
        BENCHMATRIX_HEADERS_AHEAD=0 (headers where Inductor builds them, for A/B measurements:
        bench/compile_helper_ab.py); with BENCHMATRIX_HEADERS_AHEAD=1 also the CPU where its
        vector-ISA probes are off; never where Inductor's precompiled headers are off (its
        aot_inductor.precompile_headers). The package is the same either way."""
        import torch

        setting = switch("BENCHMATRIX_HEADERS_AHEAD", "0 (never), 1 (also on the CPU without ISA "
                         "probes) or unset (CUDA only)")
        if setting == "0" or not torch._inductor.config.aot_inductor.precompile_headers:
            return False
        if device == "cuda":
            return True
        return setting == "1" and not torch._inductor.config.cpp.vec_isa_ok

    def _predicted_requests(self):
        """What AotCodeCompiler.compile (torch 2.11, codecache.py) passes to _precompile_header for
        an AOT compile on this device: the wrapper's header at the wrapper's optimisation level and,
        on the CPU, the kernels' prefix header. The weights' flags follow Inductor's own rule
        (determine_aoti_mmap_flags) for a package of up to 2 GB, or for weights in a file beside
        the library (__main__.weights_beside_library) of any size; a larger package linking its
        weights mmaps them, its request differs and Inductor builds its own header."""
        from torch._inductor import codecache
        from torch._inductor.cpp_builder import CppBuilder, CppTorchDeviceOptions
        from torch._inductor.cpu_vec_isa import pick_vec_isa
        from torch._inductor.utils import determine_aoti_mmap_flags

        codecache._set_gpu_runtime_env()  # cpp_extension consults the environment, as in compile
        picked_vec_isa = pick_vec_isa()
        command_line = repr(CppBuilder(name="o", sources="i", BuildOption=CppTorchDeviceOptions(
            vec_isa=picked_vec_isa, device_type=self.device, aot_mode=True)).get_command_line())
        external_weights, mmap_weights = determine_aoti_mmap_flags(0)  # size: up to 2 GB
        compile_command = {"aot_mode": True, "device_type": self.device,
                           "use_mmap_weights": mmap_weights,
                           "use_mmap_weights_external": external_weights,
                           "use_relative_path": False, "vec_isa": picked_vec_isa}
        wrapper_header = codecache._get_cpp_wrapper_header(self.device, aot_mode=True)
        requests = [(wrapper_header, command_line, dict(compile_command, min_optimize=True))]
        prefix_header = codecache._get_cpp_prefix_header(self.device)
        if prefix_header:
            requests.append((prefix_header, command_line, dict(compile_command)))
        return requests

    def start(self):
        """Predicts the requests here (Inductor's configuration as set now: call it after the
        helper's settings, before the compile patches its own) and builds them on a thread."""
        from torch._inductor import codecache

        try:
            self._requests = self._predicted_requests()
        except Exception as error:  # Inductor's internals moved (another torch): build as before
            self._error = error
            return self
        build = codecache._precompile_header  # functools.cache: a later equal call is a hit

        def run():
            started = time.perf_counter()
            try:
                for index, (header, command_line, keywords) in enumerate(self._requests):
                    self._results[index] = build(header, command_line, **keywords)
            except BaseException as error:  # reported by serving(); Inductor then builds it
                self._error = error
            finally:
                self._built_s = time.perf_counter() - started

        self._thread = threading.Thread(target=run, name="benchmatrix-headers-ahead", daemon=True)
        self._thread.start()
        return self

    def _index_of(self, header, command_line, keywords):
        for index, request in enumerate(self._requests):
            if request == (header, command_line, keywords):
                return index
        return None

    def serving(self):
        """Context manager: codecache._precompile_header answers the predicted requests from the
        thread (waiting for it, timed as waited_s) and passes any other to Inductor."""
        import contextlib

        from torch._inductor import codecache

        @contextlib.contextmanager
        def patched():
            original = codecache._precompile_header

            def ahead_or_inductor(header, hashable_cmd_line, **compile_command):
                index = self._index_of(header, hashable_cmd_line, compile_command)
                if index is None:
                    self._not_predicted.append(header)
                    return original(header, hashable_cmd_line, **compile_command)
                started = time.perf_counter()
                self._thread.join()
                self.waited_s += time.perf_counter() - started
                if index not in self._results:  # the thread failed: Inductor builds it (and raises)
                    return original(header, hashable_cmd_line, **compile_command)
                self._served += 1
                return self._results[index]

            codecache._precompile_header = ahead_or_inductor
            try:
                yield self
            finally:
                codecache._precompile_header = original

        return patched()

    def report(self):
        """The record's view: {"built_s": the thread's seconds (beside the compile, not on its
        critical path), "waited_s": the compile's wait for it, "used": every header Inductor asked
        for came from the thread, "not_predicted": headers it asked for with other flags, "error":
        the thread's failure, if any}."""
        if self._thread is not None:  # a header build left running would outlive the helper
            self._thread.join(timeout=120)
        report = {"built_s": round(self._built_s, 3), "waited_s": round(self.waited_s, 3),
                  "used": self._served > 0 and not self._not_predicted}
        if self._not_predicted:
            report["not_predicted"] = self._not_predicted
        if self._error is not None:
            report["error"] = f"{type(self._error).__name__}: {self._error}"
        return report
