"""AOTInductor's runtime compiled once, apart from each package's wrapper (issue 22).

Every AOTInductor wrapper source has AOTInductor's runtime interface spliced in verbatim
(torch/_inductor/codegen/aoti_runtime/interface.cpp: the C API the package loader calls, and the
model container's code it instantiates), the same text for every model, and g++ compiles it again
in every compile. On the CPU machine (2 cores, torch 2.11, resnet18's CPU wrapper with its
precompiled header) the whole wrapper took 4.98 s, its runtime part alone 2.30 s and its model part
alone 3.74 s. Built apart, the wrapper's build took 4.2-4.3 s against 5.3 s whole, whether the
runtime object was cached or built beside the model part (BENCHMARKS.md, "Compile time,
cold and warm"; records in bench/results/2026-11-28_cpu_runtime_apart_ab/).

While `RuntimeApart.active()` is entered, the wrapper's build (the CppBuilder.build of AOTInductor's
`.wrapper` object) compiles two translation units instead of one, both with the wrapper's own
command line (flags, defines, precompiled header), at the same time:
  - the runtime: the wrapper's text up to the end of the interface (the device headers and the
    interface), into an object cached in the Inductor cache directory
    (benchmatrix_aoti_runtime/<key>.o), keyed by that text, the command line with its paths taken
    out, and the compiler's --version: built once per torch, device and flags, kept by a sweep's
    shared compiler caches (and removed with --cold-start's fresh ones);
  - the model: the wrapper's text with the interface replaced by the headers it includes;
then joins the two with a relocatable link (`g++ -r`) into the object AOTInductor expects, so the
link of the package's library is Inductor's, unchanged. A wrapper without the interface text (a
torch whose AOTInductor splices something else) or a split that fails to build (a model part that
needs the interface's own definitions) is built whole, as Inductor builds it, and the report says
so. BENCHMATRIX_RUNTIME_APART=0 turns the split off (for A/B measurements:
bench/compile_helper_ab.py); any value but 0 or 1 is refused.
"""

import contextlib
import hashlib
import os
import shlex
import subprocess
import sys
import threading
import time

from benchmatrix_compile.compile_timers import is_wrapper_object
from benchmatrix_compile.switches import switch

SETTING = "BENCHMATRIX_RUNTIME_APART"
# Replaces the interface in the model's translation unit: what interface.cpp itself includes, for
# the container and model classes the model's code defines methods of.
MODEL_PART_HEADERS = ("#include <torch/csrc/inductor/aoti_runtime/interface.h>\n"
                      "#include <torch/csrc/inductor/aoti_runtime/model_container.h>\n")


def interface_text():
    """interface.cpp as AOTInductor splices it into every wrapper; None where this torch has none."""
    from torch._inductor.codegen import cpp_wrapper_cpu

    path = os.path.join(os.path.dirname(cpp_wrapper_cpu.__file__), "aoti_runtime", "interface.cpp")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


def enabled():
    """Whether the split is on (the default); exits 2 on a value other than 0 or 1."""
    return switch(SETTING, "0 (the wrapper built whole, as Inductor builds it), 1 or unset "
                           "(AOTInductor's runtime built apart, once)") != "0"


class RuntimeApart:
    """The wrapper builds split while `active()` is entered; `report()` says what happened."""

    def __init__(self, cache_dir):
        self.cache_dir = cache_dir
        self.directory = os.path.join(cache_dir, "benchmatrix_aoti_runtime")
        self.interface = interface_text()
        self.events = []  # one dict per wrapper build, for report()

    def report(self):
        """{"wrappers": [...]}: per wrapper build, whether it was split ("split": False and
        "reason" where it was built whole), whether the runtime object was already cached, and the
        seconds of the runtime's build (0 on a hit), the model part's and the join's."""
        return {"wrappers": self.events}

    @contextlib.contextmanager
    def active(self):
        from torch._inductor import cpp_builder

        original = cpp_builder.CppBuilder.build

        def build(builder):
            if not is_wrapper_object(builder):
                return original(builder)
            return self.build_wrapper(builder, original)

        cpp_builder.CppBuilder.build = build
        try:
            yield self
        finally:
            cpp_builder.CppBuilder.build = original

    def build_wrapper(self, builder, original):
        command = shlex.split(builder.get_command_line())
        target = str(builder._target_file)
        sources = [token for token in command if token.endswith(".wrapper.cpp")]
        if (self.interface is None or len(sources) != 1 or "-o" not in command
                or command[command.index("-o") + 1] != target):
            return self.whole(builder, original, "no interface.cpp or an unexpected command line")
        with open(sources[0]) as f:
            text = f.read()
        at = text.find(self.interface)
        if at < 0:
            return self.whole(builder, original, "the wrapper has no interface.cpp text")
        end = at + len(self.interface)
        runtime_text = text[:end]
        model_text = text[:at] + MODEL_PART_HEADERS + text[end:]
        try:
            event = self.split(command, sources[0], target, runtime_text, model_text)
        except (OSError, subprocess.CalledProcessError) as error:
            detail = getattr(error, "output", b"") or b""
            print(f"benchmatrix_compile: building AOTInductor's runtime apart failed "
                  f"({error}); building the wrapper whole\n"
                  + detail.decode(errors="replace")[-2000:], file=sys.stderr)
            return self.whole(builder, original, f"the split build failed: {error}")
        self.events.append(event)
        return None

    def whole(self, builder, original, reason):
        self.events.append({"split": False, "reason": reason})
        return original(builder)

    def split(self, command, source, target, runtime_text, model_text):
        """Builds the model part and (on a miss) the runtime at once, then joins them."""
        os.makedirs(self.directory, exist_ok=True)
        runtime_object = os.path.join(self.directory, self.key(command, source, target,
                                                               runtime_text, self.cache_dir) + ".o")
        model_source = source[:-len(".cpp")] + ".model.cpp"
        model_object = target[:-len(".o")] + ".model.o"
        with open(model_source, "w") as f:
            f.write(model_text)
        started = time.perf_counter()
        builds = [subprocess.Popen(self.with_paths(command, source, model_source,
                                                   model_object),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)]
        cached = os.path.exists(runtime_object)
        staging = None
        if not cached:
            staging = f"{runtime_object}.{os.getpid()}.tmp"
            runtime_source = staging + ".cpp"
            with open(runtime_source, "w") as f:
                f.write(runtime_text)
            builds.append(subprocess.Popen(self.with_paths(command, source, runtime_source,
                                                           staging),
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        outputs, seconds = [None] * len(builds), [None] * len(builds)

        def finish(index):  # each build's own end, whichever ends first
            outputs[index], _ = builds[index].communicate()
            seconds[index] = time.perf_counter() - started

        waiting = [threading.Thread(target=finish, args=(i,)) for i in range(len(builds))]
        try:
            for thread in waiting:
                thread.start()
            for thread in waiting:
                thread.join()
            for build, output in zip(builds, outputs):
                if build.returncode != 0:
                    raise subprocess.CalledProcessError(build.returncode, build.args, output)
            if staging:
                os.replace(staging, runtime_object)  # atomic: a concurrent compile sees all or none
        finally:
            if staging:
                for leftover in (staging, staging + ".cpp"):
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(leftover)
        join_started = time.perf_counter()
        try:
            subprocess.run([command[0], "-r", "-nostdlib", model_object, runtime_object, "-o",
                            target], check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        except subprocess.CalledProcessError:
            if cached:  # a damaged object in the cache (a full disk, say): the next compile rebuilds
                with contextlib.suppress(FileNotFoundError):
                    os.remove(runtime_object)
            raise
        return {"split": True, "runtime_cached": cached,
                "model_s": round(seconds[0], 3),
                "runtime_s": 0.0 if cached else round(seconds[1], 3),
                "join_s": round(time.perf_counter() - join_started, 3)}

    @staticmethod
    def with_paths(command, source, new_source, new_target):
        """The wrapper's command line compiling `new_source` into `new_target`."""
        out = list(command)
        out[out.index(source)] = new_source
        out[out.index("-o") + 1] = new_target
        return out

    @staticmethod
    def key(command, source, target, runtime_text, cache_dir):
        """SHA-256 of the runtime's text, the command line without this compile's own paths and
        the compiler's version line. The Inductor cache directory in the flags (the precompiled
        header's path, named by its content) is a placeholder: the same runtime compiled against
        the same header under another cache directory has the same key."""
        flags = [token.replace(cache_dir, "<inductor-cache>") for token in command
                 if token not in (source, target)]
        version = subprocess.run([command[0], "--version"], capture_output=True, text=True,
                                 check=False).stdout.splitlines()[:1]
        digest = hashlib.sha256()
        for part in (runtime_text, "\0".join(flags), "\0".join(version)):
            digest.update(part.encode())
            digest.update(b"\0\0")
        return digest.hexdigest()
