"""A fork server for experiment_runner's Python helpers (issue 22): imports torch once per sweep.

Usage: python -m benchmatrix_service --socket PATH [--preload MODULES] [--import-at-start]

Each compile helper (python -m benchmatrix_compile, benchmatrix_import) spends seconds importing
torch, Inductor and Triton before it does anything (9-14 s on the H100 host, BENCHMARKS.md). The
service imports them once (--preload, default PRELOAD), WITHOUT initialising CUDA, and runs each
helper in a process forked from itself, which starts with them imported.

Protocol (one Unix stream connection per helper run, process/helper_service.cpp is the client):
  request, one JSON line:  {"python": "/path/python", "module": "benchmatrix_compile",
                            "args": [...], "environment": {...}, "log": "/path", "cwd": "/path",
                            "cpus": [0, 1, ...], "sent_at": 1764000000.5}   ("python": what
                            the helper would have run; refused unless it is this service's
                            interpreter; "cpus": [] keeps the service's CPUs; "sent_at": when
                            the client sent it, seconds since the epoch, optional)
  answers, JSON lines:     {"pid": N} once forked, then {"exit": {"code": c}} or
                           {"exit": {"signal": s}} when the process has been reaped; or
                           {"refused": "why"} when this request cannot be served faithfully (the
                           client then runs the helper as a process of its own).
If the connection closes before the exit (the client was killed: a timeout, Ctrl-C), the service
SIGKILLs the helper's process group and reaps it: no orphan compiles. Requests are served
concurrently by one thread (selectors): fork is only ever called from that thread.

The forked process, as `python -m MODULE ARGS` would run: its own process group (its Triton
compile workers die with it), PR_SET_PDEATHSIG(SIGKILL) (it dies with the service), os.environ
exactly the request's environment, the request's cwd and CPUs (sched_setaffinity: the
compile-ahead children run on two CPUs each), stdin from /dev/null, stdout and stderr into the log
(opened as run_helper's Boost.Process opens it: O_WRONLY|O_CREAT, not truncated), sys.path rebuilt
from the request's PYTHONPATH, runpy.run_module(MODULE, run_name="__main__", alter_sys=True).
SystemExit's code is the exit status; an uncaught exception writes its traceback to the log and
exits 1. Then threading's and atexit's shutdown, as the interpreter's. (In ps a served helper
shows the service's command line: it is a fork, not an exec; the service's log names each one's
pid, module and log.)

Import-time state. What the preloaded modules read from the environment while they were imported
is fixed in the forked process. The service records every variable read through os.environ during
its imports (os._Environ.__getitem__: get, [], in, os.getenv) and compares each one's value then
with the request's; a request in which one differs is refused (its helper runs as a process of its
own, with a warning naming the variables), unless the variable is listed here as handled. Checked
in torch 2.11 / Triton 3.6 (the variables the runner sets per helper, `environment[` in backends/
and suites/, and CUDA_VISIBLE_DEVICES, which child_environment sets per GPU):
  TORCHINDUCTOR_CACHE_DIR  read at import by torch._dynamo.package (DynamoCache: torch.compile's
                           precompile cache, unused by AOTInductor) and by codecache's
                           _HEADER_DIR (default_cache_dir(), which the compile helper re-points
                           before compiling: headers_directory); every Inductor
                           cache calls cache_dir() at use, which reads the request's value.
                           Handled: _HEADER_DIR is re-derived in the fork as at import.
  TRITON_CACHE_DIR         read at use (triton.knobs.cache.dir is an env_str descriptor); not read
                           at import. Handled (nothing to do).
  TORCHINDUCTOR_COMPILE_THREADS  and the CPU affinity: torch._inductor.config.compile_threads is
                           decided at import (decide_compile_threads). Handled: decided again in the
                           fork after sched_setaffinity.
  CUDA_VISIBLE_DEVICES     read at import only for NVML's device count (torch.cuda.device_count is
                           not cached before CUDA initialises); CUDA initialises in the fork, with
                           the request's value. Handled.
  CUDA_DEVICE_ORDER        not read at import (the CUDA driver reads it when CUDA initialises, in
                           the fork). Nothing to handle.
  PYTORCH_NVML_BASED_CUDA_CHECK  set for the service itself (so that its imports count devices
                           through NVML, not cuInit); read at each torch.cuda.is_available().
                           Handled.
  PYTHONPATH               read by the interpreter at start, not through os.environ. Handled:
                           sys.path is rebuilt from the request's value; a request whose sys.path
                           would find torch or triton elsewhere than the service's is refused.
  TMPDIR, TEMP, TMP        tempfile caches its choice (tempfile.tempdir). Handled: reset in the
                           fork.
  OMP_NUM_THREADS, MKL_NUM_THREADS  read by the OpenMP/MKL runtimes when torch loads them (so
                           never through os.environ): checked as if read at import. Unset, a fresh
                           torch starts with one intra-op thread per CPU of its affinity, which
                           Inductor's CPU code generation reads (parallel_num_threads): the fork
                           calls torch.set_num_threads(its CPUs) after sched_setaffinity.
  XLA_FLAGS, PJRT_DEVICE, XLA_DISABLE_FUNCTIONALIZATION  (child_environment's, per config) not
                           read by the preloaded modules (jax/torchax are not preloaded).
  _, SHLVL, PWD, OLDPWD    the shell's bookkeeping, read by nothing that matters. Ignored.
  Every other variable read at import (Inductor's, Dynamo's, functorch's Config(env_name_...)
  fields, TORCH_LOGS, Triton's knobs read at import, AOT_INDUCTOR_*, CXX, HOME, ...): refused when
  it differs. Variables some module lists by iterating os.environ at import (tqdm: TQDM_*,
  networkx: NETWORKX_*) count as read under those prefixes.
Threads: the service's Python is single-threaded (selectors), so fork is only called with no
other Python thread running; torch's import starts one idle native thread, as in any process
that forks DataLoader workers after importing torch.

After its imports the service asserts that torch has not initialised CUDA
(torch.cuda.is_initialized() is False) and that a forked process would not be a "bad fork" (a
cudaGetDeviceCount during the imports, on a machine with GPUs); otherwise it exits with status 3
and a message, and the clients run their helpers as processes of their own.
"""

import argparse
import ctypes
import errno
import json
import os
import runpy
import selectors
import signal
import socket
import sys
import time
import traceback

# What a compile helper imports before it compiles (python -X importtime of benchmatrix_compile:
# torch, Inductor's compile_fx and its AOTInductor packaging, export and the TorchScript converter,
# AOT autograd for the train step, Triton for CUDA kernels). Not jax/torchax (the StableHLO
# export's): importing jax may touch the devices. Not benchmatrix_* (their source may differ per
# request's PYTHONPATH, and they import in milliseconds).
PRELOAD = ("torch", "torch._inductor.compile_fx", "torch._inductor.codecache",
           "torch._inductor.cpp_builder", "torch._inductor.package",
           "torch._inductor.async_compile", "torch.export", "torch._export.converter",
           "torch._functorch.aot_autograd", "triton?")  # "?": only if importable

# Variables read at import whose differing request value the fork re-applies or that are read
# again at use (the module docstring says how each is handled), and the shell's bookkeeping.
HANDLED = {"TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_COMPILE_THREADS",
           "CUDA_VISIBLE_DEVICES", "PYTORCH_NVML_BASED_CUDA_CHECK", "PYTHONPATH", "TMPDIR", "TEMP",
           "TMP", "_", "SHLVL", "PWD", "OLDPWD"}
# Read by the OpenMP and MKL runtimes (C getenv, not os.environ) when torch loads them: checked
# as if read at import. Unset, the fork's intra-op threads are set from its CPUs, as at a start.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
# Modules that iterate os.environ at import, and the prefix of the variables they look for.
ITERATED_PREFIXES = {"tqdm": "TQDM_", "networkx": "NETWORKX_"}

PR_SET_PDEATHSIG = 1
# A process the service could not start for a request exits with this status (its log says why).
SETUP_FAILED_STATUS = 126


def log(message):
    print(f"benchmatrix_service[{os.getpid()}]: {message}", file=sys.stderr, flush=True)


class ImportedState:
    """The preloaded modules and the environment variables read while importing them."""

    def __init__(self, modules):
        self.modules = [m for m in modules if m]
        self.done = False
        self.seconds = 0.0
        self.read = {}  # variable -> its value at import (None: unset)
        self.prefixes = set()

    def load(self):
        """Imports the modules once, recording what they read; exits 3 if CUDA was touched."""
        if self.done:
            return
        import importlib

        environment_class = os._Environ
        original_getitem = environment_class.__getitem__
        original_iter = environment_class.__iter__
        read = self.read
        prefixes = self.prefixes
        unknown = set()  # modules that listed the environment, looking for who knows what

        def recording_getitem(environment, key):
            caller = sys._getframe(1).f_code
            # items()/values() iterating read every variable: the iteration is recorded instead.
            listing = caller.co_name == "__iter__" and "_collections_abc" in caller.co_filename
            if environment is os.environ and not listing:
                read.setdefault(key, None)  # its value is taken after the imports
            return original_getitem(environment, key)

        def recording_iter(environment):
            if environment is os.environ:
                frame = sys._getframe(1)
                while frame is not None:
                    top = frame.f_globals.get("__name__", "").split(".")[0]
                    if top in ITERATED_PREFIXES:
                        prefixes.add(ITERATED_PREFIXES[top])
                        break
                    if top not in ("os", "_collections_abc", "collections"):
                        unknown.add(top)
                        break
                    frame = frame.f_back
            return original_iter(environment)

        started = time.perf_counter()
        environment_class.__getitem__ = recording_getitem
        environment_class.__iter__ = recording_iter
        try:
            for name in self.modules:
                optional = name.endswith("?")
                name = name.rstrip("?")
                try:
                    importlib.import_module(name)
                except ImportError as error:
                    if not optional:
                        raise
                    log(f"not preloading {name}: {error}")
        finally:
            environment_class.__getitem__ = original_getitem
            environment_class.__iter__ = original_iter
        # The values at import: every recorded name, re-read without the recorder.
        for key in list(read) + list(THREAD_VARIABLES):
            read[key] = os.environ.get(key)
        self.seconds = time.perf_counter() - started
        self.done = True
        if unknown:
            log(f"not checked: {', '.join(sorted(unknown))} listed the environment at import")
        check_cuda_untouched()
        names = ", ".join(m.rstrip("?") for m in self.modules) or "nothing"
        log(f"imported {names} in {self.seconds:.2f} s "
            f"({len(read)} environment variables read)")

    def differences(self, environment):
        """The variables read at import whose value differs in `environment` and that the fork
        does not handle."""
        changed = [key for key, value in self.read.items()
                   if key not in HANDLED and environment.get(key) != value]
        start_environment = dict(os.environ)
        for prefix in self.prefixes:
            for key in set(start_environment) | set(environment):
                if key.startswith(prefix) and environment.get(key) != start_environment.get(key):
                    changed.append(key)
        return sorted(set(changed))


def check_cuda_untouched():
    """Exits 3 when the imports initialised CUDA, which a forked process cannot use."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    if torch.cuda.is_initialized():
        log("refusing to serve: importing the preloaded modules initialised CUDA in the service, "
            "and a forked compile could not use it; the helpers run as processes of their own")
        sys.exit(3)
    # A cudaGetDeviceCount during the imports (NVML unavailable) registers torch's fork handler:
    # a forked process is then a "bad fork" that cannot initialise CUDA. Harmless without GPUs.
    pid = os.fork()
    if pid == 0:
        os._exit(1 if torch.cuda._is_in_bad_fork() else 0)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 and torch.cuda.device_count() > 0:
        log("refusing to serve: the imports asked the CUDA driver for the device count (NVML was "
            "not usable), so a forked compile could not initialise CUDA; the helpers run as "
            "processes of their own")
        sys.exit(3)


def parse_request(line):
    request = json.loads(line)
    if not isinstance(request, dict):
        raise ValueError("a request is a JSON object")
    for key, kind in (("module", str), ("args", list), ("environment", dict), ("log", str),
                      ("cwd", str), ("cpus", list)):
        if not isinstance(request.get(key), kind):
            raise ValueError(f'a request needs "{key}" ({kind.__name__})')
    if not all(isinstance(a, str) for a in request["args"]):
        raise ValueError('"args" must be strings')
    if not all(isinstance(v, str) for v in request["environment"].values()):
        raise ValueError('"environment" values must be strings')
    if not all(isinstance(c, int) for c in request["cpus"]):
        raise ValueError('"cpus" must be integers')
    return request


def same_python(python, environment):
    """Whether `python` (a path, or a name looked up in the request's PATH) is this one."""
    import shutil

    if os.sep not in python:
        python = shutil.which(python, path=environment.get("PATH", os.defpath)) or python
    return os.path.abspath(python) == os.path.abspath(sys.executable)


def service_path_entries():
    """The entries the interpreter put on sys.path from the service's own PYTHONPATH."""
    return [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


def request_sys_path(request):
    """sys.path as `python -m` would build it for the request: its directory, its PYTHONPATH,
    then the interpreter's own entries (the service's sys.path less its PYTHONPATH's)."""
    own_entries = service_path_entries()
    base = [p for p in sys.path[1:] if p not in own_entries]
    requested = [p for p in request["environment"].get("PYTHONPATH", "").split(os.pathsep) if p]
    return [os.path.abspath(request["cwd"])] + requested + base


def shadowed_modules(request):
    """The preloaded top-level packages (torch, triton) that the request's sys.path would find
    elsewhere than where the service imported them from: its helper would have run another torch."""
    from importlib.machinery import PathFinder

    path = request_sys_path(request)
    shadowed = []
    for name in sorted({m.rstrip("?").split(".")[0] for m in PRELOAD}):
        module = sys.modules.get(name)
        if module is None or not getattr(module, "__file__", None):
            continue
        spec = PathFinder.find_spec(name, path)
        found = spec.origin if spec is not None else None
        if found is None or os.path.realpath(found) != os.path.realpath(module.__file__):
            shadowed.append(f"{name} ({found or 'not found'}, the service's {module.__file__})")
    return shadowed


def run_forked(request, service_pid, service_s, inherited_fds):
    """In the forked process: set it up as `python -m` would and run the module; never returns."""
    code = SETUP_FAILED_STATUS
    try:
        os.setpgid(0, 0)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != service_pid:  # the service died before prctl
            os._exit(SETUP_FAILED_STATUS)
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
            signal.signal(number, signal.SIG_DFL)
        for fd in inherited_fds:
            os.close(fd)
        sys.stdout.flush()
        sys.stderr.flush()
        log_fd = os.open(request["log"], os.O_WRONLY | os.O_CREAT, 0o660)
        null_fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null_fd, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(null_fd)
        os.close(log_fd)
    except BaseException:  # nothing can be reported but the status
        os._exit(SETUP_FAILED_STATUS)
    try:
        prepare_process(request, service_s)
        code = run_module(request["module"], request["args"])
    except BaseException:
        traceback.print_exc()
        code = SETUP_FAILED_STATUS
    os._exit(shut_down(code))


def prepare_process(request, service_s):
    """The request's environment, directory, CPUs and sys.path; the import-time state re-applied."""
    import tempfile

    path = request_sys_path(request)
    os.environ.clear()
    os.environ.update(request["environment"])
    os.chdir(request["cwd"])
    if request["cpus"]:
        os.sched_setaffinity(0, request["cpus"])
    sys.path[:] = path
    import importlib

    importlib.invalidate_caches()
    tempfile.tempdir = None
    torch = sys.modules.get("torch")
    if torch is not None and not any(request["environment"].get(name) for name in THREAD_VARIABLES):
        # A fresh torch starts with one intra-op thread per CPU of its affinity (OpenMP reads it
        # when torch loads it); Inductor's CPU code generation reads it (parallel_num_threads).
        torch.set_num_threads(len(os.sched_getaffinity(0)))
    if "torch._inductor.config" in sys.modules:
        from torch._inductor import config

        config.compile_threads = config.decide_compile_threads()
    if "torch._inductor.codecache" in sys.modules:
        from torch._inductor import codecache
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir

        codecache._HEADER_DIR = os.path.join(default_cache_dir(), "precompiled_headers")
        codecache._HEADER_LOCK_DIR = os.path.join(codecache._HEADER_DIR, "locks")
    import benchmatrix_service

    benchmatrix_service.SERVED = {"service_s": round(service_s, 3)}


def run_module(module, args):
    """runpy as `python -m` runs it; returns the exit status."""
    sys.argv = [module] + list(args)
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as done:
        if done.code is None:
            return 0
        if isinstance(done.code, int):
            return done.code
        print(done.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def shut_down(code):
    """The interpreter's shutdown that os._exit skips: non-daemon threads, then atexit."""
    import atexit
    import threading

    try:
        threading._shutdown()
    except BaseException:
        traceback.print_exc()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    return code & 0xFF


class Connection:
    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""
        self.pid = None  # the forked helper, once started
        self.received = None  # when its request line arrived (time.time())

    def send(self, message):
        try:
            self.sock.sendall((json.dumps(message) + "\n").encode())
        except OSError:
            pass  # the client is gone: its EOF kills the helper


class Service:
    def __init__(self, socket_path, imported):
        self.socket_path = socket_path
        self.imported = imported
        self.selector = selectors.DefaultSelector()
        self.by_pid = {}
        self.stopping = False
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(socket_path)
        self.listener.listen(128)
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ, "listener")
        self.wakeup_read, self.wakeup_write = os.pipe()
        os.set_blocking(self.wakeup_read, False)
        os.set_blocking(self.wakeup_write, False)
        self.selector.register(self.wakeup_read, selectors.EVENT_READ, "wakeup")
        signal.set_wakeup_fd(self.wakeup_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the selector through the pipe
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        log(f"listening on {self.socket_path}")

    def stop(self, *_):
        self.stopping = True

    def serve(self):
        try:
            while not self.stopping:
                for key, _ in self.selector.select():
                    if key.data == "listener":
                        self.accept()
                    elif key.data == "wakeup":
                        try:
                            while os.read(self.wakeup_read, 512):
                                pass
                        except BlockingIOError:
                            pass
                    else:
                        self.readable(key.data)
                self.reap()
        finally:
            for connection in list(self.by_pid.values()):
                self.kill(connection)
            try:
                os.unlink(self.socket_path)
            except OSError:
                pass
            log("stopped")

    def accept(self):
        while True:
            try:
                sock, _ = self.listener.accept()
            except BlockingIOError:
                return
            sock.setblocking(False)
            self.selector.register(sock, selectors.EVENT_READ, Connection(sock))

    def readable(self, connection):
        try:
            data = connection.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the client is gone
            self.close(connection)
            return
        if connection.pid is not None:
            return  # nothing more is expected from it; the EOF matters
        connection.buffer += data
        if b"\n" in connection.buffer:
            line = connection.buffer.split(b"\n", 1)[0]
            self.start(connection, line)

    def start(self, connection, line):
        connection.received = time.time()
        try:
            request = parse_request(line)
        except ValueError as error:
            log(f"bad request: {error}")
            connection.send({"refused": f"bad request: {error}"})
            self.close(connection)
            return
        python = request.get("python")
        if python is not None and not same_python(python, request["environment"]):
            why = f"it asks for the Python {python}, the service runs {sys.executable}"
            log(f"refused {request['module']}: {why}")
            connection.send({"refused": why})
            self.close(connection)
            return
        self.imported.load()  # the first request imports, unless --import-at-start did
        changed = self.imported.differences(request["environment"])
        shadowed = shadowed_modules(request)
        if changed or shadowed:
            why = ("its environment differs from the service's in variables read when torch was "
                   "imported: " + ", ".join(changed) if changed else
                   "its PYTHONPATH finds another " + ", ".join(shadowed))
            log(f"refused {request['module']}: {why}")
            connection.send({"refused": why})
            self.close(connection)
            return
        sys.stdout.flush()
        sys.stderr.flush()
        # From the client's send (it may have waited in the listen backlog while the service
        # imported) to the fork; the request's arrival when the client did not say.
        sent_at = request.get("sent_at")
        started = sent_at if isinstance(sent_at, (int, float)) else connection.received
        service_s = max(0.0, time.time() - started)
        inherited = [self.listener.fileno(), self.wakeup_read, self.wakeup_write] + [
            key.fileobj.fileno() for key in self.selector.get_map().values()
            if isinstance(key.data, Connection)]
        pid = os.fork()
        if pid == 0:
            run_forked(request, os.getppid(), service_s, sorted(set(inherited)))
        try:
            os.setpgid(pid, pid)  # also from here: killpg works at once, whoever runs first
        except OSError:
            pass
        connection.pid = pid
        self.by_pid[pid] = connection
        connection.send({"pid": pid})
        log(f"started {request['module']} as {pid} (log {request['log']})")

    def reap(self):
        for pid, connection in list(self.by_pid.items()):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done == 0:
                continue
            del self.by_pid[pid]
            try:
                os.killpg(pid, signal.SIGKILL)  # its compile workers do not outlive it
            except OSError:
                pass
            if os.WIFSIGNALED(status):
                connection.send({"exit": {"signal": os.WTERMSIG(status)}})
            else:
                connection.send({"exit": {"code": os.WEXITSTATUS(status)}})
            connection.pid = None
            self.close(connection)

    def kill(self, connection):
        """SIGKILL to the helper's group, then reaps it."""
        pid = connection.pid
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError as error:
            if error.errno != errno.ESRCH:
                raise
        while True:
            try:
                os.waitpid(pid, 0)
                break
            except ChildProcessError:
                break
            except InterruptedError:
                continue
        self.by_pid.pop(pid, None)
        log(f"killed {pid}: its client went away")

    def close(self, connection):
        if connection.pid is not None:
            self.kill(connection)
            connection.pid = None
        try:
            self.selector.unregister(connection.sock)
        except (KeyError, ValueError):
            pass
        connection.sock.close()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmatrix_service",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--socket", required=True, help="Unix socket path to listen on")
    parser.add_argument("--preload", default=",".join(PRELOAD),
                        help="comma-separated modules to import once (a trailing ? marks one "
                             "imported only if available; empty: none); default %(default)s")
    parser.add_argument("--import-at-start", action="store_true",
                        help="import them at once instead of at the first request")
    args = parser.parse_args(argv)
    # CUDA's device count through NVML, not cuInit: a forked process cannot use an initialised
    # driver. For the service's own imports only: the forks get the request's environment.
    os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    imported = ImportedState(args.preload.split(","))
    service = Service(args.socket, imported)
    if args.import_at_start:
        imported.load()
    service.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
