"""Python's torch.compile train step against eager, each against float64, on one model of a
TorchBench checkout built as our import helper builds it (issue 49: our inductor train step FAILs
--verify on the CPU for resnet18 and mobilenet_v2; this shows whether torch.compile's own step
has the same error). One step as our verifier runs it: the checkout's Model(test="train",
batch_size=BATCH) with random weights (python/benchmatrix_import), seed 1337 before each run,
Inductor's fallback_random (PyTorch's --accuracy: dropout draws eager's masks), loss = mean of the
output, backward; each gradient's RMSE against the float64 step's, and PyTorch's same() verdict
for an fp64 reference (res_error <= 2 * ref_error + tol / 10; tol 1e-4 for a float32 train step).
Prints the parameters whose compiled RMSE is furthest above eager's.
Usage: python bench/torch_compile_train_grads.py MODEL [BATCH (2)] [CHECKOUT (.torchbench_checkout)]
  [DEVICE (cpu)]"""
import copy
import os
import sys

import torch
import torch._inductor.config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from benchmatrix_import.torchbench_checkout import build_torchbench  # noqa: E402


class Unbuildable(Exception):
    pass


def gradients(model, *inputs):
    """Every parameter's gradient after one backward of the output's mean, seeded as eager's."""
    model.zero_grad(set_to_none=True)
    torch.manual_seed(1337)
    output = model(*inputs)
    (output.sum() / output.numel()).backward()
    return {name: p.grad.detach().clone() for name, p in model.named_parameters()}


def rmse(value, reference):
    return ((value.double() - reference) ** 2).mean().sqrt().item()


def main():
    name = sys.argv[1]
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    checkout = sys.argv[3] if len(sys.argv) > 3 else ".torchbench_checkout"
    device = sys.argv[4] if len(sys.argv) > 4 else "cpu"
    torch._inductor.config.fallback_random = True
    module, inputs, _, _ = build_torchbench(name, batch, device, "train", checkout, True,
                                            Unbuildable)
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    module.train()
    fp64 = gradients(copy.deepcopy(module).double(), *[x.double() for x in inputs])
    eager = gradients(copy.deepcopy(module), *inputs)
    compiled = torch.compile(gradients)(copy.deepcopy(module), *inputs)
    rows = []
    for parameter, reference in fp64.items():
        ref_error, res_error = rmse(eager[parameter], reference), rmse(compiled[parameter], reference)
        verdict = "pass" if res_error <= 2 * ref_error + 1e-4 / 10 else "FAIL"
        rows.append((res_error / max(ref_error, 1e-30), parameter, ref_error, res_error, verdict))
    failing = sum(row[-1] == "FAIL" for row in rows)
    print(f"{name}, batch {batch}, {device}: torch.compile's gradients fail same() on {failing} of "
          f"{len(rows)} parameters")
    print("| parameter | eager RMSE vs fp64 | torch.compile RMSE vs fp64 | ratio | same() |")
    print("|---|---|---|---|---|")
    for ratio, parameter, ref_error, res_error, verdict in sorted(rows, reverse=True)[:6]:
        print(f"| {parameter} | {ref_error:.5g} | {res_error:.5g} | {ratio:.0f} | {verdict} |")


if __name__ == "__main__":
    main()
