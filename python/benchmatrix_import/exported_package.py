"""torch.export packages (.pt2) in the import cache: what the inductor backend compiles directly
(no TorchScript -> TS2EPConverter round trip) and what torch::nativert runs for a user's .pt2.

Two producers, one format: torch.export.save's archive (torch 2.11 writes the pt2 archive of
torch.export.pt2_archive, the program named "model", its example inputs in
data/sample_inputs/model.pt), which torch.export.load, aoti_compile_and_package and
torch::nativert::ModelRunnerHandle(path, "model") all read.
  - write_exported_program: an imported model's eval forward (the same module the TorchScript
    program is traced from), exported non-strict with static shapes. Under torch.export
    transformers builds the attention masks it builds under torch.compile (with torch 2.11 both
    keep BERT-like models' mask, which a torch.jit.trace lets it skip: BENCHMARKS.md, "Inductor's program").
  - convert_user_package: a user's .pt2 (--suite-name=exported), moved to the run's device and cast
    to its dtype as PyTorch's harness casts a model (module.to(dtype), the floating inputs too), then
    exported again, so that the child gets the program for its config (the runner's inference runs in
    bfloat16; the verifier's reference in float64)."""

import os

PACKAGE_NAME = "exported.pt2"
# In place of the package when torch.export failed on an imported model: why, one line. The C++
# child then compiles the traced TorchScript program as before (TS2EPConverter) and its record
# says why (model_source.exported_program_failure).
FAILURE_NAME = "exported.pt2.failed"


class UnusablePackage(Exception):
    """The user's file is no torch.export package this torch can load, or its example inputs do
    not fit it (exit status 1, this message)."""


def save_atomically(exported, directory):
    """torch.export.save into <directory>/exported.pt2 through a temporary name: a concurrent reader
    (another child of the same config) sees the whole package or none."""
    import torch

    path = os.path.join(directory, PACKAGE_NAME)
    partial = os.path.join(directory, f".exported-partial-{os.getpid()}.pt2")  # torch wants .pt2
    try:
        torch.export.save(exported, partial)
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return path


def tensor_attributes_as_buffers(module):
    """Registers every plain tensor attribute of `module` and its submodules (`self.cache_k =
    torch.zeros(...)`, neither a parameter nor a buffer) as a non-persistent buffer, in place; returns
    their dotted names. torch.export lifts such a tensor as a constant, which a forward must not
    write: TorchBench's llama writes its KV caches (`self.cache_k[:bsz, ...] = xk`), and AOTInductor
    failed on the package ("mutating a non-functional tensor with a functional tensor", H100 and
    CPU, 2026-12-07). As a buffer the write is exported as a buffer mutation, as torch.compile
    treats the attribute; the forward computes what it did, and the state dict is unchanged."""
    import torch

    converted = []
    for prefix, submodule in module.named_modules():
        for name, value in list(vars(submodule).items()):
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
                delattr(submodule, name)
                submodule.register_buffer(name, value, persistent=False)
                converted.append(f"{prefix}.{name}" if prefix else name)
    return converted


def write_exported_program(module, inputs, directory):
    """Exports `module` (eval mode) on `inputs` and saves it into `directory`. Returns the path.
    The module's plain tensor attributes become buffers first (tensor_attributes_as_buffers)."""
    import torch

    tensor_attributes_as_buffers(module)
    with torch.no_grad():
        exported = torch.export.export(module, tuple(inputs), strict=False)
    return save_atomically(exported, directory)


def write_exported_program_or_why(module, inputs, directory):
    """write_exported_program, or, where torch.export fails on the model, FAILURE_NAME saying why
    (a model the TorchScript path compiles must not lose its inductor run to export)."""
    import sys

    try:
        write_exported_program(module, inputs, directory)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        why = f"torch.export failed: {type(e).__name__}: {first}"
        print(f"benchmatrix_import: warning: {why}", file=sys.stderr)
        with open(os.path.join(directory, FAILURE_NAME), "w") as f:
            f.write(why + "\n")


def load_user_package(program, inputs_file):
    """The user's ExportedProgram and its example inputs: `inputs_file` (a torch.save'd tuple) when
    given, else the example inputs torch.export.save stored in the package. Raises
    UnusablePackage naming the file and what was expected."""
    import torch

    try:
        exported = torch.export.load(program)
    except Exception as e:  # torch raises RuntimeError, ValueError, KeyError, zipfile errors...
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise UnusablePackage(
            f"cannot load {program} as a torch.export package (expected the archive "
            f"torch.export.save writes): {type(e).__name__}: {first}") from e
    if inputs_file:
        try:
            inputs = torch.load(inputs_file, weights_only=True)
        except Exception as e:
            raise UnusablePackage(f"cannot read the example inputs {inputs_file} (expected a "
                                  f"torch.save'd tuple of tensors): {type(e).__name__}: {e}")
        inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    else:
        stored = exported.example_inputs
        if stored is None:
            raise UnusablePackage(
                f"{program} holds no example inputs and no {os.path.basename(program)[:-4]}"
                ".inputs.pt is beside it (expected a torch.save'd tuple of tensors there)")
        inputs, keywords = stored
        if keywords:
            raise UnusablePackage(
                f"{program}'s example inputs pass keyword arguments ({', '.join(keywords)}); "
                "benchmatrix passes a model's inputs positionally: export it with positional "
                "arguments, or put them, in the forward's order, in a .inputs.pt beside it")
    bad = [type(x).__name__ for x in inputs if not isinstance(x, torch.Tensor)]
    if bad:
        raise UnusablePackage(f"the example inputs of {program} must be tensors; "
                              f"got {', '.join(bad)}")
    return exported, tuple(inputs)


def convert_user_package(program, inputs_file, device, dtype, directory):
    """Writes <directory>/exported.pt2 (the user's program on `device` in `dtype`) and
    <directory>/inputs.pt (its example inputs, CPU). Returns (the input shapes, the parameter
    count)."""
    import torch
    from torch.export.passes import move_to_device_pass

    exported, inputs = load_user_package(program, inputs_file)
    exported = move_to_device_pass(exported, device)  # also the device arguments of its ops
    module = exported.module().to(device=device, dtype=dtype)
    cast = tuple((x.to(dtype) if x.is_floating_point() else x).to(device) for x in inputs)
    try:
        write_exported_program(module, cast, directory)
    except Exception as e:  # a guard of the program (its static shapes), an op's dtype check...
        first = str(e).splitlines()[0] if str(e) else ""
        shapes = ", ".join(f"{str(x.dtype).replace('torch.', '')}{list(x.shape)}" for x in cast)
        raise UnusablePackage(
            f"{program} does not run on its example inputs ({shapes}, from "
            f"{inputs_file or 'the package'}; cast to {str(dtype).replace('torch.', '')} on "
            f"{device}): {type(e).__name__}: {first}") from e
    torch.save(tuple(x.cpu() for x in cast), os.path.join(directory, "inputs.pt"))
    return [list(x.shape) for x in cast], sum(p.numel() for p in module.parameters())
