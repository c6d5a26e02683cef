"""python -m benchmatrix_kernel_check PLAN.json: run_and_check's evaluation child for KernelBench-style
Python sources (a Model/ModelNew nn.Module, get_inputs(), get_init_inputs(); inline CUDA through
torch.utils.cpp_extension or Triton). The protocol is kernel_check/evaluation_protocol.md: it loads
both files as modules of their own (no shared namespace), constructs both modules from the same seed,
runs the trials and the timed calls the plan asks for, and writes outputs (.npy) and result.json. It
compares nothing: run_and_check does.
"""
import importlib.util
import json
import os
import sys
import time
import traceback

_progress = None


def phase(text):
    _progress.write(text + "\n")
    _progress.flush()


class SideFailure(Exception):
    def __init__(self, side, stage, message):
        super().__init__(message)
        self.side, self.stage, self.message = side, stage, message


def load_side(spec, side, extensions_dir):
    path, entry_point = spec["path"], spec["entry_point"]
    if extensions_dir and side == "custom":
        # load_inline builds under here (torch versions its builds by source hash and locks them).
        os.makedirs(extensions_dir, exist_ok=True)
        os.environ["TORCH_EXTENSIONS_DIR"] = extensions_dir
    try:
        module_spec = importlib.util.spec_from_file_location(f"benchmatrix_kernel_{side}", path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_spec.name] = module  # a real module from a real file: Triton's inspect works
        module_spec.loader.exec_module(module)
    except BaseException:  # SyntaxError, a failed load_inline build, an import error, SystemExit
        raise SideFailure(side, "load", traceback.format_exc(limit=8))
    # The reference's get_inputs/get_init_inputs serve both sides (as KernelBench's do).
    needed = (entry_point, "get_inputs", "get_init_inputs") if side == "ref" else (entry_point,)
    missing = [name for name in needed if not hasattr(module, name)]
    if missing:
        raise SideFailure(side, "load", f"{path} defines no {', '.join(missing)}")
    return module


def to_device(value, device):
    import torch
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    return value


def init_arguments(raw):
    """KernelBench: [list, dict] means (args, kwargs); anything else is a list of positional args."""
    if isinstance(raw, (list, tuple)) and len(raw) == 2 and isinstance(raw[0], (list, tuple)) \
            and isinstance(raw[1], dict):
        return list(raw[0]), dict(raw[1])
    return list(raw), {}


def cloned(inputs):
    import torch
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]


def leaves(value, out):
    import torch
    if isinstance(value, torch.Tensor):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            leaves(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            leaves(v, out)
    elif isinstance(value, bool):
        out.append(torch.tensor(value))
    elif isinstance(value, int):
        out.append(torch.tensor(value, dtype=torch.int64))
    elif isinstance(value, float):
        out.append(torch.tensor(value, dtype=torch.float64))
    elif value is not None:
        raise TypeError(f"cannot compare an output of type {type(value).__name__}")
    return out


def save_outputs(output, out_dir, prefix):
    import numpy
    import torch
    described = []
    for i, t in enumerate(leaves(output, [])):
        original = str(t.dtype).replace("torch.", "")
        t = t.detach().cpu()
        if t.dtype in (torch.float16, torch.bfloat16):
            t = t.float()  # exact widening; "dtype" keeps the original
        name = f"{prefix}_{i}.npy"
        numpy.save(os.path.join(out_dir, name), numpy.ascontiguousarray(t.numpy()))
        described.append({"file": name, "dtype": original, "shape": list(t.shape)})
    return described


def synchronize(device):
    import torch
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_calls(call, warmup, trials, l2_flush, device):
    """Per-call ms: CUDA events around each call after zeroing a 256 MB buffer (outside the events),
    or time.perf_counter wall time on the CPU."""
    import torch
    for _ in range(warmup):
        call()
    synchronize(device)
    if device.type != "cuda":
        times = []
        for _ in range(trials):
            start = time.perf_counter()
            call()
            times.append((time.perf_counter() - start) * 1e3)
        return times
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device=device) if l2_flush else None
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
    for i in range(trials):
        if cache is not None:
            cache.zero_()
        starts[i].record()
        call()
        ends[i].record()
    synchronize(device)
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def run(plan):
    import torch
    device = torch.device(plan["device"])
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(f"--device {plan['device']}: CUDA is not available to torch here")
        torch.cuda.set_device(device)
    seed = plan["seed"]
    out_dir = plan["out_dir"]
    result = {"timer": "cuda_events" if device.type == "cuda" else "steady_clock", "load_error": None}
    try:
        phase("loading the reference")
        ref_file = load_side(plan["ref"], "ref", None)
        phase("loading the custom module")
        custom_file = load_side(plan["custom"], "custom", plan.get("extensions_dir"))
        with torch.no_grad():
            phase("get_init_inputs")
            torch.manual_seed(seed)
            args, kwargs = init_arguments(to_device(ref_file.get_init_inputs(), device))
            phase("constructing the reference")
            try:
                torch.manual_seed(seed)
                ref = getattr(ref_file, plan["ref"]["entry_point"])(*args, **kwargs).to(device)
            except Exception:
                raise SideFailure("ref", "construct", traceback.format_exc(limit=8))
            phase("constructing the custom module")
            try:
                torch.manual_seed(seed)
                custom = getattr(custom_file, plan["custom"]["entry_point"])(*args, **kwargs).to(device)
            except Exception:
                raise SideFailure("custom", "construct", traceback.format_exc(limit=8))
    except SideFailure as failure:
        result["load_error"] = {"side": failure.side, "stage": failure.stage, "message": failure.message}
        return result

    trials = []
    with torch.no_grad():
        for index, trial_seed in enumerate(plan["trial_seeds"]):
            phase(f"trial {index}: get_inputs")
            torch.manual_seed(trial_seed)
            inputs = to_device(list(ref_file.get_inputs()), device)
            phase(f"trial {index}: reference forward")
            ref_output = ref(*cloned(inputs))
            synchronize(device)
            trial = {"seed": trial_seed, "ref": save_outputs(ref_output, out_dir, f"t{index}_ref"),
                     "custom": None, "custom_error": None}
            phase(f"trial {index}: custom forward")
            try:
                custom_output = custom(*cloned(inputs))
                synchronize(device)
                trial["custom"] = save_outputs(custom_output, out_dir, f"t{index}_custom")
            except Exception as error:
                trial["custom_error"] = f"{type(error).__name__}: {error}"
            trials.append(trial)
            if trial["custom_error"]:
                break
        result["trials"] = trials

        result["perf"] = None
        if plan["perf_trials"] > 0:
            phase("performance: get_inputs")
            torch.manual_seed(seed)
            inputs = to_device(list(ref_file.get_inputs()), device)
            ref_inputs, custom_inputs = cloned(inputs), cloned(inputs)
            phase("performance: reference")
            perf = {"ref_ms": time_calls(lambda: ref(*ref_inputs), plan["warmup"], plan["perf_trials"],
                                         plan["l2_flush"], device),
                    "custom_ms": [], "custom_error": None}
            phase("performance: custom")
            try:
                perf["custom_ms"] = time_calls(lambda: custom(*custom_inputs), plan["warmup"],
                                               plan["perf_trials"], plan["l2_flush"], device)
            except Exception as error:
                perf["custom_error"] = f"{type(error).__name__}: {error}"
            result["perf"] = perf
    phase("done")
    return result


def main(argv):
    global _progress
    if len(argv) != 2:
        print("usage: python -m benchmatrix_kernel_check PLAN.json (started by run_and_check)",
              file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        plan = json.load(f)
    _progress = open(plan["progress"], "a", encoding="utf-8")
    result = run(plan)
    temporary = plan["result"] + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    os.replace(temporary, plan["result"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
