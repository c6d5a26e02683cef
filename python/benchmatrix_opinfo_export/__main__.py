"""Exports PyTorch OpInfo sample inputs for backend_bench's `opinfo` suite.

    python -m benchmatrix_opinfo_export OUT_DIR [--max-samples-per-op 3]

Writes OUT_DIR/samples.pt (torch.save of a list of tensors) and OUT_DIR/suite.json: for every kept
aten overload ("add.Tensor") a list of tests, each the positional and keyword arguments that aten
overload received, tensors as {"tensor": index into samples.pt}. Samples come from
torch.testing._internal.common_methods_invocations.op_db (float32 on the CPU; backend_bench casts the
floating tensors to the dtype it tests). As BackendBench's opinfo suite, a sample is kept only when
it dispatches exactly one aten overload (traced with a TorchDispatchMode) and re-invoking that
overload on the traced arguments reproduces the result; in-place and out= overloads, random ops and
tensor-creation ops are left out. Deterministic: no random draws beyond OpInfo's own, seeded here.
"""
import argparse
import json
import math
import os
import random
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# Ops whose results are random, uninitialised or depend on allocation (BackendBench's lists, with
# their missing commas fixed), and index-heavy ones whose samples are data-dependent.
EXCLUDED_BASES = {
    "bernoulli", "rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "randperm",
    "normal", "uniform", "exponential", "geometric", "cauchy", "log_normal", "multinomial",
    "native_dropout", "dropout", "empty", "empty_like", "empty_strided", "new_empty",
    "new_empty_strided", "empty_permuted", "new_full", "new_ones", "new_zeros", "zeros_like", "ones_like",
    "full_like", "clone", "copy", "_to_copy", "lift_fresh", "alias", "nonzero_static",
    "_local_scalar_dense", "item", "resize", "set", "detach", "lift_fresh_copy", "arange",
    "linspace", "logspace", "full", "zeros", "ones", "eye", "scalar_tensor", "_unsafe_view",
    "unique", "_unique2", "unique_consecutive", "nonzero", "masked_select", "sort", "argsort",
    "topk", "kthvalue", "mode", "median", "nanmedian",
}
# View ops return aliases of their input: correct, but nothing a kernel library overrides.
VIEW_BASES = {"view", "reshape", "expand", "permute", "transpose", "t", "squeeze", "unsqueeze",
              "slice", "select", "as_strided", "unfold", "split", "split_with_sizes", "chunk",
              "unbind", "diagonal", "narrow", "view_as_real", "view_as_complex", "alias",
              "_reshape_alias", "expand_as", "view_as", "movedim", "swapaxes", "unflatten",
              "flatten", "_unsafe_view", "t_", "real", "imag", "conj", "_conj", "_neg_view"}


# Samples are correctness tests: small ones keep the data file and the CPU runs small.
MAX_SAMPLE_ELEMENTS = 1 << 16


class _Recorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.calls.append((func, args, kwargs))
        return func(*args, **kwargs)


def _overload_name(func):
    packet = func._schema.name  # "aten::add"
    if not packet.startswith("aten::"):
        return None
    return packet[len("aten::"):] + "." + (func._overloadname or "default")


def _same(a, b):
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_complex() or a.is_sparse:
            return False
        return bool(torch.equal(a, b)) or bool(
            torch.allclose(a.double(), b.double(), rtol=1e-5, atol=1e-6, equal_nan=True))
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(
            _same(x, y) for x, y in zip(a, b))
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def _signature(value):
    """What makes two samples the same test for our purposes: shapes, strides, dtypes and the
    non-tensor arguments (not the tensors' values)."""
    if isinstance(value, torch.Tensor):
        return ("T", tuple(value.shape), tuple(value.stride()), str(value.dtype))
    if isinstance(value, (list, tuple)):
        return tuple(_signature(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _signature(v)) for k, v in sorted(value.items()))
    return repr(value)


class _Unsupported(Exception):
    pass


def _encode(value, tensors):
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            return {"float": repr(value)}
        return {"float": value}
    if isinstance(value, str):
        return {"str": value}
    if isinstance(value, torch.Tensor):
        if value.is_sparse or value.is_complex() or value.is_quantized or value.layout != torch.strided:
            raise _Unsupported("tensor kind")
        if value.dtype not in (torch.float32, torch.float64, torch.int64, torch.int32, torch.bool,
                               torch.uint8, torch.int8, torch.int16):
            raise _Unsupported("dtype " + str(value.dtype))
        tensors.append(value.detach().clone())
        return {"tensor": len(tensors) - 1}
    if isinstance(value, (list, tuple)):
        return [_encode(v, tensors) for v in value]
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).replace("torch.", "")}
    if isinstance(value, torch.device):
        return {"device": "device"}
    if isinstance(value, torch.memory_format):
        return {"memory_format": str(value).replace("torch.", "")}
    if isinstance(value, torch.layout):
        return {"layout": str(value).replace("torch.", "")}
    raise _Unsupported(type(value).__name__)


def _stub_expecttest():
    """torch.testing._internal imports expecttest (a test-only PyPI package) for its TestCase base
    class; the samples do not need it, so a stand-in is enough where it is not installed."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        import types
        import unittest
        module = types.ModuleType("expecttest")
        module.TestCase = type("TestCase", (unittest.TestCase,), {})
        sys.modules["expecttest"] = module


def main():
    parser = argparse.ArgumentParser(prog="benchmatrix_opinfo_export")
    parser.add_argument("out_dir")
    parser.add_argument("--max-samples-per-op", type=int, default=3)
    options = parser.parse_args()
    # OpInfo's sample generators draw from torch's, Python's and numpy's generators.
    torch.manual_seed(0)
    random.seed(0)
    try:
        import numpy
        numpy.random.seed(0)
    except ImportError:
        pass
    _stub_expecttest()
    from torch.testing._internal.common_methods_invocations import op_db

    tests = {}
    signatures = {}
    tensors = []
    skipped = 0
    for opinfo in op_db:
        if "." in opinfo.name and not opinfo.name.startswith("nn.functional."):
            continue
        if opinfo.name.startswith("_"):
            continue
        try:
            if torch.float32 not in opinfo.supported_dtypes("cpu"):
                continue
            samples = list(opinfo.sample_inputs("cpu", torch.float32, requires_grad=False))
        except Exception:
            skipped += 1
            continue
        for sample in samples:
            recorder = _Recorder()
            try:
                with recorder:
                    opinfo.op(sample.input, *sample.args, **sample.kwargs)
            except Exception:
                continue
            if len(recorder.calls) != 1:
                continue
            func, args, kwargs = recorder.calls[0]
            name = _overload_name(func)
            if name is None:
                continue
            base, overload = name.split(".", 1)
            if (base in EXCLUDED_BASES or base in VIEW_BASES or base.endswith("_")
                    or "out" in overload or func._schema.is_mutable):
                continue
            if len(tests.get(name, [])) >= options.max_samples_per_op:
                continue
            signature = _signature((args, kwargs))
            if signature in signatures.setdefault(name, set()):
                continue  # the same shapes and arguments again: keep the few slots distinct
            try:
                first = func(*args, **kwargs)
                second = func(*args, **kwargs)
                if not _same(first, second):
                    continue
                mark = len(tensors)
                encoded = {"args": _encode(list(args), tensors),
                           "kwargs": {k: _encode(v, tensors) for k, v in kwargs.items()},
                           "opinfo": opinfo.name}
                if sum(t.numel() for t in tensors[mark:]) > MAX_SAMPLE_ELEMENTS:
                    raise _Unsupported("too large")
            except _Unsupported:
                del tensors[mark:]
                continue
            except Exception:
                continue
            tests.setdefault(name, []).append(encoded)
            signatures[name].add(signature)
    os.makedirs(options.out_dir, exist_ok=True)
    torch.save(tensors, os.path.join(options.out_dir, "samples.pt"))
    suite = {"suite": "opinfo", "source": "torch.testing._internal.common_methods_invocations.op_db",
             "torch_version": torch.__version__, "sample_dtype": "float32", "sample_device": "cpu",
             "tensors": "samples.pt", "ops": dict(sorted(tests.items()))}
    with open(os.path.join(options.out_dir, "suite.json"), "w") as out:
        json.dump(suite, out, indent=1)
    print(f"opinfo: {len(tests)} aten overloads, {sum(len(v) for v in tests.values())} tests, "
          f"{len(tensors)} tensors ({skipped} OpInfos failed to give samples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
