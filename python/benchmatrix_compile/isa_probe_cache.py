"""Inductor's CPU ISA probes, remembered across compile helpers in the Inductor cache directory.

Every AOTInductor compile (CUDA ones too: AotCodeCompiler.compile calls pick_vec_isa) asks which
vector ISAs work: for each candidate (AVX2, AVX512, AVX512-BF16, VNNI...) VecISA.check_build
compiles a probe (cached in the Inductor cache directory) and then runs `python -c "import torch;
cdll.LoadLibrary(probe)"` to see that it loads. Inductor remembers the answer per process only, so
each helper paid one torch import per ISA again: 55 of the 103 s of a tiny CPU compile on a loaded
2-core machine (issue 22). The answer depends only on the probe's source, its compiler flags, the
compiler, torch and the CPU, which make the key of a small file per answer (written atomically:
concurrent helpers may both probe, and either's file is right). Being a fact of the machine, the
answers are kept per user, under $XDG_CACHE_HOME (default ~/.cache)/benchmatrix/isa_probes/, not in
each compile cache: the runner's default --cache-dir is per output directory, and every new one
paid the probes again (65 of the 107 s of a tiny CPU compile on the 2-core build machine, issue
48). --cold-start (--fresh-caches) probes again into its empty cache directory, as a fresh PyTorch
process does.
"""

import contextlib
import hashlib
import json
import os
import platform
import shutil
import tempfile

from benchmatrix_compile.user_cache import user_cache_directory


def _cpu_flags():
    """The CPU's feature flags (the first 'flags' line of /proc/cpuinfo), or the machine name."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return line.strip()
    except OSError:
        pass
    return platform.machine()


@contextlib.contextmanager
def remembered_isa_probes(timer, fresh_caches=False):
    """While active, VecISA.check_build answers from (and records into) the probe cache: the
    user's (user_cache_directory("isa_probes")), or with `fresh_caches` one in Inductor's (empty) cache
    directory. The probes that run are timed by `timer` (compile_timers.CompileTimer.isa_probe)."""
    import torch
    from torch._inductor import cpu_vec_isa
    from torch._inductor.codecache import cache_dir
    from torch._inductor.cpp_builder import get_cpp_compiler

    original = cpu_vec_isa.VecISA.check_build
    directory = (os.path.join(cache_dir(), "benchmatrix_isa_probes") if fresh_caches
                 else user_cache_directory("isa_probes"))
    compiler = get_cpp_compiler()
    compiler_path = shutil.which(compiler) or compiler
    try:  # a reinstalled compiler at the same path is another compiler
        compiler_file = os.stat(compiler_path)
        compiler += (f" {os.path.realpath(compiler_path)} {compiler_file.st_size} "
                     f"{compiler_file.st_mtime}")
    except OSError:
        pass
    machine = "\n".join([torch.__version__, compiler, _cpu_flags()])

    def remembered_check_build(isa, code):
        key = hashlib.sha256("\n".join([machine, isa._arch_flags, code]).encode()).hexdigest()
        path = os.path.join(directory, key + ".json")
        try:
            with open(path) as f:
                return bool(json.load(f)["supported"])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # not probed yet (or an unreadable file): probe and record
        with timer.isa_probe():
            supported = original(isa, code)
        os.makedirs(directory, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=directory, suffix=".tmp", delete=False) as f:
            json.dump({"isa": str(isa), "arch_flags": isa._arch_flags,
                       "supported": bool(supported)}, f)
        os.chmod(f.name, 0o644)  # as Inductor's own cache files (NamedTemporaryFile makes 0600)
        os.replace(f.name, path)
        return supported

    cpu_vec_isa.VecISA.check_build = remembered_check_build
    try:
        yield
    finally:
        cpu_vec_isa.VecISA.check_build = original
