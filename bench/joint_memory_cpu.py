#!/usr/bin/env python3
"""Does compiling the train step's joint forward+backward graph whole cost memory that
torch.compile's partitioned step does not? (issue 50: our inductor train step's CUDA graph capture
peaked at 3317 MB for resnet50 at batch 32 against 1908 MB for cudagraphs, H100, 2026-12-07, and
the min-cut partition joined again changed nothing.) Answered on the CPU, where no capture is
involved: the peak resident memory of one step (after two warm-up steps) above the memory
resident before it, for
  eager            the module's forward, sum/numel loss, backward
  compile          the same under torch.compile (AOTAutograd's forward and backward graphs)
  joint            aot_export_module's joint graph (train_step.py's path, without the TorchScript
                   round trip) compiled whole by Inductor
  joint_partition  the same traced with Inductor's decompositions, partitioned by the min-cut
                   partitioner and joined again (joint_partition.py, BENCHMATRIX_TRAIN_PARTITION=1)
Before each step the gradients are set to None, so every variant allocates its gradients inside
the step measured (the joint graph returns fresh ones each call).
Run each variant in its own process, with large blocks mmap'ed so that a free returns its pages:
  MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=0 OMP_NUM_THREADS=2 \
    python bench/joint_memory_cpu.py VARIANT MODEL BATCH SIZE [amp]   (a torchvision model name;
  amp: the forward under the CPU's bfloat16 autocast, as the CUDA train step runs under float16's)
Prints one line: the three measured steps' peaks, MB (10^6 bytes)."""
import os
import sys
import time

import torch
import torch._inductor.lowering  # noqa: F401  Inductor's max_pool decomposition reads it
import torchvision
from torch._functorch.aot_autograd import aot_export_module

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from benchmatrix_compile import joint_partition  # noqa: E402


def resident_bytes(field):
    """VmRSS: or VmHWM: of this process, bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def reset_peak_resident():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM back to VmRSS


class ForwardAndLoss(torch.nn.Module):
    """(loss, detached prediction): the shape aot_export_module's trace_joint wants."""

    def __init__(self, module):
        super().__init__()
        self.m = module

    def forward(self, x):
        out = self.m(x)
        return out.sum() / out.numel(), out.detach()


def joint_step(model, x, partitioned, autocast):
    """The joint graph compiled whole by Inductor, and its inputs (parameters, buffers, x)."""
    decompositions = joint_partition.trace_decompositions() if partitioned else None
    with autocast():  # the casts autocast makes are traced into the joint graph
        joint, signature = aot_export_module(ForwardAndLoss(model), (x,), trace_joint=True,
                                             output_loss_index=0, decompositions=decompositions)
    state = {f"m.{name}": t for name, t in [*model.named_parameters(), *model.named_buffers()]}
    inputs = [state[name].detach() for name in [*signature.parameters, *signature.buffers]] + [x]
    if partitioned:
        mutated = len(signature.buffers_to_mutate)
        joint, _ = joint_partition.partitioned_joint(
            joint, loss_index=mutated, forward_output_count=mutated + len(signature.user_outputs),
            static_input_count=len(signature.parameters) + len(signature.buffers))
    compiled = torch._inductor.compile(joint, inputs)
    return lambda: compiled(*inputs)


def main(variant, name, batch, size, amp):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().train()
    x = torch.randn(batch, 3, size, size)

    def autocast():
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp)
    if variant in ("eager", "compile"):
        forward = ForwardAndLoss(model)
        if variant == "compile":
            forward = torch.compile(forward)
        grad_mode = torch.enable_grad

        def step():
            with autocast():
                loss, _ = forward(x)
            loss.backward()
    elif variant in ("joint", "joint_partition"):
        step = joint_step(model, x, variant == "joint_partition", autocast)
        grad_mode = torch.no_grad  # the joint graph computes its gradients itself
    else:
        raise SystemExit(f"unknown variant {variant!r}: eager, compile, joint or joint_partition")
    started = time.perf_counter()
    with grad_mode():
        for _ in range(2):
            step()
    warm_up_s = time.perf_counter() - started
    peaks = []
    for _ in range(3):
        model.zero_grad(set_to_none=True)
        before = resident_bytes("VmRSS:")
        reset_peak_resident()
        with grad_mode():
            step()
        peaks.append(round((resident_bytes("VmHWM:") - before) / 1e6))
    print(f"{variant} {name} batch {batch} {size}px{' bfloat16 autocast' if amp else ''}: step peak above the memory resident before "
          f"it, MB: {peaks} (warm-up {warm_up_s:.0f} s)")


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6) or sys.argv[5:] not in ([], ["amp"]):
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:] == ["amp"])
