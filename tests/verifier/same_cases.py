"""Generates comparison cases and torch._dynamo.utils.same's verdict on each, for same_test.cpp.

usage: same_cases.py OUT.pt
Writes, with torch.save, a list of dicts {"name", "ref", "res", "fp64", "options", "verdict"}: verdict
is "pass", "fail" or "raises". The C++ port must give the same verdict on every case.
"""
import copy
import logging
import math
import sys

import torch
from torch._dynamo.utils import same

logging.getLogger("torch._dynamo.utils").setLevel(logging.CRITICAL)  # it warns on every cosine failure

OPTION_DEFAULTS = dict(cos_similarity=False, tol=1e-4, equal_nan=False, exact_dtype=True,
                       ignore_non_fp=False, use_larger_multiplier_for_smaller_tensor=False,
                       force_max_multiplier=False, use_iou_for_bool=False, iou_threshold=0.99)

cases = []


def add(name, ref, res, fp64=None, **options):
    opts = dict(OPTION_DEFAULTS, **options)
    try:
        verdict = "pass" if same(ref, res, fp64, log_error=lambda *a, **k: None, **opts) else "fail"
    except Exception:  # Python's asserts and unsupported types
        verdict = "raises"
    # Copies: later cases mutate tensors in place, and torch.save would store their final state.
    cases.append({"name": name, "ref": copy.deepcopy(ref), "res": copy.deepcopy(res),
                  "fp64": copy.deepcopy(fp64), "options": opts, "verdict": verdict})


g = torch.Generator().manual_seed(1337)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


# Random tensors perturbed at scales around the allclose and RMSE thresholds, per dtype and tol.
for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    for shape in ((7,), (40, 30), (2, 3, 1, 1), (3, 5, 4, 4)):
        golden = randn(*shape)
        for tol in (0.0, 1e-4, 1e-3, 1e-2, 8e-2):
            for scale in (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1):
                ref = (golden + 1e-3 * randn(*shape)).to(dtype)
                res = (golden + scale * randn(*shape)).to(dtype)
                name = f"{dtype}-{shape}-tol{tol}-scale{scale}"
                add(name + "-nofp64", ref, res, tol=tol)
                add(name + "-fp64", ref, res, golden, tol=tol)
                add(name + "-cos", ref, res, golden, tol=tol, cos_similarity=True)
# Near the RMSE rule's boundary: res error = k x ref error, k around the multipliers 2, 3, 8, 10.
for numel in (8, 300, 999, 1000, 5000):
    golden = randn(numel)
    noise = randn(numel)
    for k in (1.9, 1.99, 2.0, 2.01, 2.1, 2.9, 3.0, 3.1, 7.9, 8.1, 9.9, 10.1):
        ref = golden + 1e-2 * noise
        res = golden + k * 1e-2 * noise
        for larger in (False, True):
            add(f"boundary-{numel}-{k}-{larger}", ref.float(), res.float(), golden,
                use_larger_multiplier_for_smaller_tensor=larger)
        add(f"boundary-{numel}-{k}-force", ref.float(), res.float(), golden,
            force_max_multiplier=True)
        add(f"boundary-{numel}-{k}-bf16", ref.bfloat16(), res.bfloat16(), golden)
# NaN and inf.
base = randn(50)
for equal_nan in (False, True):
    for what in ("nan", "inf", "-inf"):
        value = float(what)
        a, b = base.clone(), base.clone()
        a[3] = value
        add(f"{what}-ref-only-{equal_nan}", a, b, base.double(), equal_nan=equal_nan)
        b[3] = value
        add(f"{what}-both-{equal_nan}", a, b, base.double(), equal_nan=equal_nan)
        add(f"{what}-both-nofp64-{equal_nan}", a, b, equal_nan=equal_nan)
        add(f"{what}-both-cos-{equal_nan}", a, b, cos_similarity=True, equal_nan=equal_nan)
        f = base.double().clone()
        f[3] = value
        add(f"{what}-all-{equal_nan}", a, b, f, equal_nan=equal_nan)
    c = base.clone()
    c[3] = math.nan
    near = base + 1e-3 * randn(50)
    add(f"ref-nan-res-better-{equal_nan}", c, near, base.double(), equal_nan=equal_nan)
# dtypes and exact_dtype.
add("dtype-mismatch", base, base.double(), base.double())
add("dtype-mismatch-relaxed", base, base.double(), base.double(), exact_dtype=False)
add("dtype-mismatch-relaxed-2", base.double(), base + 1e-3, base.double(), exact_dtype=False)
# Integers and bools.
ints = torch.randint(0, 10, (20,), generator=g)
add("int-equal", ints, ints.clone())
add("int-differ", ints, ints + 1)
add("int-differ-tol2", ints, ints + 1, tol=2.0)
add("int-differ-ignore", ints, ints + 1, ignore_non_fp=True)
add("int-cos", ints, ints + 1, cos_similarity=True)
mask = torch.rand(100, generator=g) > 0.5
flipped = mask.clone()
flipped[:1] = ~flipped[:1]
add("bool-equal", mask, mask.clone())
add("bool-differ", mask, flipped)
add("bool-differ-ignore", mask, flipped, ignore_non_fp=True)
add("bool-iou-1flip", mask, flipped, use_iou_for_bool=True)
add("bool-iou-1flip-strict", mask, flipped, use_iou_for_bool=True, iou_threshold=0.999)
empty = torch.zeros(10, dtype=torch.bool)
add("bool-iou-empty", empty, empty.clone(), use_iou_for_bool=True)
# Zeros (cosine of zero vectors is 0, saved by the allclose early exit).
add("zeros-cos", torch.zeros(10), torch.zeros(10), cos_similarity=True)
add("zeros-vs-tiny-cos", torch.zeros(10), torch.full((10,), 1e-3), cos_similarity=True)
# Scalars and Python floats.
add("int-scalar-equal", 3, 3)
add("int-scalar-differ", 3, 4)
add("int-scalar-ignore", 3, 4, ignore_non_fp=True)
add("str-equal", "a", "a")
add("str-differ", "a", "b")
add("none", None, None)
add("bool-scalar", True, False)
add("float-close", 1.0, 1.0 + 1e-6)
add("float-far", 1.0, 1.1)
# Structures.
t1, t2 = randn(30), randn(30)
add("tuple-equal", (t1, t2), (t1.clone(), t2.clone()))
add("tuple-second-differs", (t1, t2), (t1.clone(), t2 + 1))
add("tuple-vs-list", (t1, t2), [t1.clone(), t2.clone()])
add("tuple-length", (t1, t2), (t1.clone(),))
add("tuple-vs-tensor", (t1, t2), t1)
add("nested", [t1, (t2, {"a": t1, "b": 3})], [t1.clone(), (t2.clone(), {"a": t1.clone(), "b": 3})])
add("nested-int-differs", [t1, (t2, {"a": t1, "b": 3})], [t1.clone(), (t2.clone(), {"a": t1.clone(), "b": 4})])
add("dict-equal", {"x": t1, "y": t2}, {"y": t2.clone(), "x": t1.clone()})
add("dict-differs", {"x": t1, "y": t2}, {"x": t1.clone(), "y": t2 * 2})
add("dict-keys", {"x": t1}, {"z": t1.clone()})
add("dict-vs-tuple", {"x": t1}, (t1,))
add("nested-fp64", (t1, t2), (t1 + 1e-3, t2 + 1e-3), (t1.double(), t2.double()))

torch.save(cases, sys.argv[1])
print(f"{len(cases)} cases, verdicts: " +
      ", ".join(f"{v} {sum(c['verdict'] == v for c in cases)}" for v in ("pass", "fail", "raises")))
