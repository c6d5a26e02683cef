"""The compiled train step of experiment_runner's inductor backend (`--train`).

Input: the forward traced by the C++ child with its state as inputs, forward(self, *inputs,
*parameters, *buffers) -> tuple of output tensors (backends/traced_graph.hpp, trace_train_forward;
parameters deduplicated by identity, buffers updated in place as BatchNorm does), the example
inputs, and the state's values (torch.save'd tuples, CPU).

Output: one AOTInductor package whose forward takes (*parameters, *buffers, *inputs), returns
    (loss, *prediction leaves, *parameter gradients)
and writes the buffers the forward updates (BatchNorm's running statistics) into the buffers it
was given, as torch.compile's graph mutates them: Inductor stores the new values from the kernels
that compute them, where a package returning them left the C++ step one device copy per buffer
(resnet50: 159 memcpys, 0.19 of 7.6 ms per step on the H100, 2026-12-07). Loss is
reduce_to_scalar_loss of the prediction as the eager train step computes it (backends/backend.hpp:
sum/numel per tensor, the mean over the leaves), and the gradients follow the parameters' order
(zeros for a parameter the loss does not reach, as full_train_output reports it). The package
metadata "benchmatrix_buffers_updated_in_place" lists the updated buffers' indices ("0,1,2"; ""
for none), "benchmatrix_updated_buffers" those returned as trailing outputs instead (the StableHLO
export's way, and packages compiled before 2026-12-07: "" here), and
"benchmatrix_parameters_without_gradient" the parameters the loss does not reach.

Path: TorchScript -> TS2EPConverter (static shapes) -> ExportedProgram -> AOTAutograd's
aot_export_module(trace_joint=True): one functional joint forward+backward graph (with
BENCHMATRIX_TRAIN_PARTITION=1 traced with Inductor's decompositions, partitioned by AOTAutograd's
min-cut partitioner as torch.compile partitions it and joined again: joint_partition.py) ->
torch.export of that graph with the state as graph inputs (not frozen constants: the optimizer
changes them) -> aoti_compile_and_package. One package for the whole step rather than forward and
backward packages stitched by an autograd function: one call per step, no saved activations crossing a package
boundary, and one graph Inductor can fuse across the forward/backward seam. Its
convolution_backward calls take the layout Inductor gives the forward's convolutions, as
torch.compile's separate backward graph does (conv_backward_layout.py).

Random ops (dropout): the joint graph draws dropout's mask as LibTorch's eager kernel does
(_eager_dropout), each draw reading the tensor it masks so that Inductor keeps the draws in the
network's order (_bernoulli_after), and Inductor's fallback_random runs the random ops through the
ATen kernels on the device's default generator, so a step seeded as eager's draws eager's masks.

LibTorch's C++ API passes an int for an `int[2]` argument as a one-element list
(`torch::max_pool2d(x, 3, 2, 1)`); those are repeated as Python's argument parser does
(_expanded_int_lists), since Inductor's max_pool2d_with_indices_backward lowering needs both.
"""

import contextlib
import json
import math
import sys
import traceback

import torch

from benchmatrix_compile import joint_partition
from benchmatrix_compile.conv_backward_layout import ChannelsLastConvolutionBackward
from benchmatrix_compile.conv_backward_layout import enabled as conv_backward_layout_enabled
from benchmatrix_compile.mutations_removed import remove_mutations

# The exit status of a --train compile whose export (TorchScript -> ExportedProgram -> joint graph)
# fails: a limit of the model's forward (data-dependent shapes, an op the export lacks), reported
# as a SKIP record, apart from a failing compile (status 1).
EXPORT_FAILED = 4


def reduce_to_scalar_loss(leaves, structure, amp):
    """torch._dynamo.testing.reduce_to_scalar_loss as the C++ reduce_to_scalar_loss computes it:
    sum/numel of each tensor leaf, the mean over each list/tuple/dict level of `structure` (nested
    lists of leaf indices mirroring the output). Under float16 autocast (the CUDA train step),
    autocast runs `sum` in float32 (its fp32 op list), so reduced-precision leaves sum as float32
    here too."""
    if isinstance(structure, int):
        leaf = leaves[structure]
        if amp and leaf.dtype in (torch.float16, torch.bfloat16):
            leaf = leaf.float()
        return leaf.sum() / leaf.numel()
    total = reduce_to_scalar_loss(leaves, structure[0], amp)
    for part in structure[1:]:
        total = total + reduce_to_scalar_loss(leaves, part, amp)
    return total / len(structure)


class _ForwardAndLoss(torch.nn.Module):
    """The traced forward with its state as this module's parameters and buffers, returning
    (loss, *prediction leaves): the shape aot_export_module's trace_joint wants."""

    def __init__(self, forward, parameters, buffers, loss_structure, amp):
        super().__init__()
        self.forward_graph = forward
        self.loss_structure = loss_structure
        self.amp = amp
        self.parameter_count = len(parameters)
        self.buffer_count = len(buffers)
        for i, p in enumerate(parameters):
            parameter = torch.nn.Parameter(p.clone(), requires_grad=p.is_floating_point())
            self.register_parameter(f"p{i}", parameter)
        for i, b in enumerate(buffers):
            self.register_buffer(f"b{i}", b.clone())

    def forward(self, *inputs):
        parameters = [getattr(self, f"p{i}") for i in range(self.parameter_count)]
        buffers = [getattr(self, f"b{i}") for i in range(self.buffer_count)]
        outputs = self.forward_graph(*inputs, *parameters, *buffers)
        if isinstance(outputs, torch.Tensor):
            outputs = (outputs,)
        structure = self.loss_structure
        if structure is None:
            structure = list(range(len(outputs)))
        loss = reduce_to_scalar_loss(outputs, structure, self.amp)
        # Only the loss may require grad in a joint export; the prediction is reported, not
        # differentiated.
        return (loss, *(o.detach() for o in outputs))


class _TrainStep(torch.nn.Module):
    """The joint graph as a function of (*parameters, *buffers, *inputs), returning
    (loss, *prediction, *gradients), and the updated buffers either written into the buffer
    arguments (`buffers_in_place`) or returned after the gradients: what the package runs."""

    def __init__(self, joint, signature, forward_and_loss, parameters, buffers, input_count,
                 output_count, buffers_in_place=False):
        super().__init__()
        self.joint = joint
        self.buffers_in_place = buffers_in_place
        self.parameter_count = len(parameters)
        self.buffer_count = len(buffers)
        self.input_count = input_count
        self.output_count = output_count  # the joint graph's user outputs: loss and prediction
        names = {f"p{i}": i for i in range(len(parameters))}
        names.update({f"b{i}": len(parameters) + i for i in range(len(buffers))})
        # The joint graph's inputs: its parameters, then buffers (by name), then the user inputs.
        # An index into this step's state, or the name of one of the forward's own constants
        # (kept here as buffers, so that the package holds them as constants).
        self.state_order = []
        for name in (*signature.parameters, *signature.buffers):
            if name in names:
                self.state_order.append(names[name])
            else:
                constant = f"constant{len(self.state_order)}"
                self.register_buffer(constant, forward_and_loss.get_buffer(name))
                self.state_order.append(constant)
        mutated = signature.buffers_to_mutate  # output name -> buffer name
        self.mutated_count = len(mutated)
        self.updated_buffers = sorted(names[b] - len(parameters) for b in mutated.values())
        mutated_outputs = list(mutated.values())  # the joint graph's order of them
        self.update_order = [mutated_outputs.index(f"b{i}") for i in self.updated_buffers]
        gradients = signature.backward_signature.gradients_to_parameters  # output -> param name
        self.gradient_of = {names[p]: position for position, p in enumerate(gradients.values())}

    def forward(self, *args):
        state = args[: self.parameter_count + self.buffer_count]
        inputs = args[self.parameter_count + self.buffer_count:]
        outputs = self.joint(*(state[i] if isinstance(i, int) else getattr(self, i)
                               for i in self.state_order), *inputs)
        updates = outputs[: self.mutated_count]
        user = outputs[self.mutated_count: self.mutated_count + self.output_count]
        gradients = outputs[self.mutated_count + self.output_count:]
        grads = []
        self.without_gradient = []  # noted while torch.export traces this
        for i in range(self.parameter_count):
            position = self.gradient_of.get(i)
            if position is None or gradients[position] is None:
                self.without_gradient.append(i)
                grads.append(torch.zeros_like(state[i]))
            else:
                grads.append(gradients[position])
        if self.buffers_in_place:
            for buffer, j in zip(self.updated_buffers, self.update_order):
                state[self.parameter_count + buffer].copy_(updates[j])
            return (*user, *grads)
        return (*user, *grads, *(updates[j] for j in self.update_order))


def _bernoulli_after(input, p):
    """empty_like(input).bernoulli_(p), the noise of LibTorch's eager dropout, drawn as an op that
    reads `input` (aten.bernoulli.p of the detached input: a draw has no gradient), so that
    Inductor schedules each draw after the layer feeding it and the draws keep the network's
    order. A noise tensor from empty_like depends on nothing, and Inductor hoisted such draws
    ahead of one another (hf_GPT2 on the CPU: the 25 embedding and residual dropouts before the
    12 attention ones), giving eager's masks to other layers: its train step FAILed --verify.
    ATen's bernoulli(input, p) fills a new contiguous tensor with bernoulli_(p), the same kernel
    and generator; eager's empty_like keeps the input's strides and its CPU kernel draws in memory
    order, so the input is viewed in its memory order (a permutation) for the draw and the noise
    permuted back. An input that no permutation makes contiguous (overlapping or with gaps) keeps
    the empty_like draw."""
    order = sorted(range(input.dim()), key=lambda d: input.stride(d), reverse=True)
    in_memory_order = input.permute(order)
    if not in_memory_order.is_contiguous():
        return torch.empty_like(input).bernoulli_(p)
    inverse = [order.index(d) for d in range(input.dim())]
    return torch.bernoulli(in_memory_order.detach(), p).permute(inverse)


def _eager_dropout(input, p, train):
    """aten.dropout as LibTorch's eager kernel draws it, so that a seeded step draws the same mask:
    on CUDA the fused native_dropout; elsewhere (_dropout_impl) a float noise tensor filled by
    bernoulli_(1 - p) and scaled, whose CPU kernel draws differently from native_dropout's boolean
    mask (which torch's own decomposition of dropout would use)."""
    if not train or p == 0 or input.numel() == 0:
        return input
    if input.is_cuda and p < 1:
        return torch.ops.aten.native_dropout(input, p, train)[0]
    if p == 1:
        return input * torch.zeros_like(input)
    noise = _bernoulli_after(input, 1 - p)
    return input * (noise / (1 - p))


def _eager_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                     scale=None, enable_gqa=False):
    """aten.scaled_dot_product_attention with dropout as LibTorch's eager CPU kernel computes it
    (its math form, dropout through aten.dropout, i.e. _eager_dropout); anywhere else, or without
    dropout, the op itself."""
    if query.is_cuda or dropout_p == 0 or enable_gqa:
        return torch.ops.aten.scaled_dot_product_attention(
            query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa)
    length, source_length = query.size(-2), key.size(-2)
    scaling = math.sqrt(scale if scale is not None else 1 / math.sqrt(query.size(-1)))
    attention = (query * scaling) @ (key * scaling).transpose(-2, -1)
    if is_causal:
        causal = torch.ones(length, source_length, dtype=torch.bool, device=query.device).tril()
        attention = attention.masked_fill(~causal, float("-inf"))
    if attn_mask is not None:
        attention = (attention.masked_fill(~attn_mask, float("-inf"))
                     if attn_mask.dtype == torch.bool else attention + attn_mask)
    attention = _eager_dropout(attention.softmax(-1), dropout_p, True)
    return attention @ value


def _eager_dropouts(module):
    """`module` with its aten.dropout and attention calls drawn as _eager_dropout and
    _eager_attention: torch's tracing decomposes aten.dropout into native_dropout (also inside
    attention's math form) before a decomposition table is consulted, so the graph's calls are
    replaced instead."""
    for node in module.graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.aten.dropout.default:
            node.target = _eager_dropout
        elif (node.op == "call_function"
              and node.target is torch.ops.aten.scaled_dot_product_attention.default):
            node.target = _eager_attention
    module.recompile()
    return module


def _expanded_int_lists(module):
    """`module` with each one-element list passed to a fixed-size `int[N]` argument of an ATen op
    repeated N times, as Python's argument parser expands `max_pool2d(x, 3, 2, 1)` to
    kernel_size=[3, 3]. LibTorch's C++ API passes such an int as a one-element IntArrayRef
    (`torch::max_pool2d(x, 3, 2, 1)` in the C++ models), which eager kernels repeat but some
    Inductor lowerings do not accept (max_pool2d_with_indices_backward asserts
    len(kernel_size) == 2: resnet18's train step failed to lower), so the traced graph is made
    what torch.compile sees from Python. Empty lists (stride=[] means "the kernel size") stay."""
    for node in module.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        arguments = node.target._schema.arguments
        args = list(node.args)
        for position, argument in enumerate(arguments):
            size = getattr(argument, "N", None)
            if not size or size < 2 or not str(argument.type).startswith("List[int]"):
                continue
            if position < len(args) and isinstance(args[position], (list, tuple)) \
                    and len(args[position]) == 1:
                args[position] = list(args[position]) * size
            elif isinstance(node.kwargs.get(argument.name), (list, tuple)) \
                    and len(node.kwargs[argument.name]) == 1:
                node.update_kwarg(argument.name, list(node.kwargs[argument.name]) * size)
        node.args = tuple(args)
    module.recompile()
    return module


def _constants_as_buffers(module):
    """`module` with its tensor constants (the traced graph's literals, lifted by the export) as
    buffers: aot_export_module turns only parameters and buffers into fake tensors while tracing,
    and a real tensor meeting a fake one fails. The final export keeps them as constants."""
    owned = {id(t) for t in (*module.parameters(), *module.buffers())}
    for node in module.graph.nodes:
        if node.op != "get_attr":
            continue
        owner_path, _, name = node.target.rpartition(".")
        owner = module.get_submodule(owner_path) if owner_path else module
        value = getattr(owner, name, None)
        if isinstance(value, torch.Tensor) and id(value) not in owned:
            delattr(owner, name)
            owner.register_buffer(name, value)
            owned.add(id(value))
    return module


def joint_trace_decompositions(toolchain):
    """Decompositions applied while the joint graph is traced, where the autograd engine still
    casts each gradient to its input's dtype, rather than later by the compiler, where nothing
    does. `toolchain`: "inductor" or "stablehlo".

    Inductor's own decomposition of _softmax_backward_data (torch 2.11) casts its result to
    input_dtype and then, through its pw_cast_for_opmath wrapper, back to the gradient's dtype:
    for autocast's float16-in, float32-out softmax (`_softmax(x, dim, half_to_float=True)`, what
    autocast runs for softmax on CUDA) the gradient reaching the float16 scores stayed float32,
    and the package's matmul of it with a float16 operand failed at run time (BERT_pytorch:
    "expected mat1 and mat2 to have the same dtype, but got: float != c10::Half").
    torch.compile traces its joint graph with Inductor's decompositions, so there the engine
    restores float16; inductor's step traces that one decomposition the same way (torch.compile's
    kernels, cast where autograd casts). The StableHLO export takes torch's core decomposition of
    the op (torch._decomp: aten ops torchax lowers, the result in input_dtype), not Inductor's
    (its fma is an Inductor prim)."""
    op = torch.ops.aten._softmax_backward_data.default
    if toolchain == "inductor":
        from torch._inductor.decomposition import select_decomp_table

        table = select_decomp_table()
    elif toolchain == "stablehlo":
        from torch._decomp import core_aten_decompositions

        table = core_aten_decompositions()
    else:
        raise ValueError(f"joint_trace_decompositions: unknown toolchain {toolchain!r}")
    return {op: table[op]} if op in table else {}


def export_train_step(exported, example, state, parameter_count, amp, loss_structure=None,
                      toolchain="inductor", notes=None, buffers_in_place=False):
    """The joint train step of `exported` (an ExportedProgram of forward(*example, *state)) as an
    ExportedProgram of forward(*state, *example); alongside, the indices of the buffers it updates
    (written into its buffer arguments with `buffers_in_place`, else returned after the
    gradients) and of the parameters the loss does not reach (their gradients are zeros in the
    package; the child leaves them None, as eager's backward does). For Inductor with
    BENCHMATRIX_TRAIN_PARTITION=1 the joint graph is traced with Inductor's decompositions and
    partitioned as torch.compile partitions it (joint_partition.py); `notes`, a dict if given,
    then receives the partition's report as "train_partition"."""
    from torch._functorch.aot_autograd import aot_export_module

    parameters = list(state[:parameter_count])
    buffers = list(state[parameter_count:])
    forward = _eager_dropouts(_expanded_int_lists(_constants_as_buffers(exported.module())))
    forward_and_loss = _ForwardAndLoss(forward, parameters, buffers, loss_structure, amp)
    partition = toolchain == "inductor" and joint_partition.enabled()
    decompositions = (joint_partition.trace_decompositions() if partition
                      else joint_trace_decompositions(toolchain))
    joint, signature = aot_export_module(forward_and_loss, tuple(example), trace_joint=True,
                                         output_loss_index=0, decompositions=decompositions)
    output_count = len(signature.user_outputs)
    if partition:
        mutated_count = len(signature.buffers_to_mutate)
        joint, report = joint_partition.partitioned_joint(
            joint, loss_index=mutated_count, forward_output_count=mutated_count + output_count,
            static_input_count=len(signature.parameters) + len(signature.buffers))
        if notes is not None:
            notes["train_partition"] = report
    step = _TrainStep(joint, signature, forward_and_loss, parameters, buffers, len(example),
                      output_count, buffers_in_place)
    step_exported = torch.export.export(step, (*state, *example), strict=False)
    return step_exported, step.updated_buffers, step.without_gradient


def load_train_step_arguments(args, device):
    """The module (args.torchscript), its example inputs (args.inputs) and its state (args.state:
    parameters then buffers) of a --train compile or export, loaded onto `device`."""
    module = torch.jit.load(args.torchscript, map_location=device)
    example = tuple(x.to(device) for x in torch.load(args.inputs, weights_only=True))
    state = tuple(x.to(device) for x in torch.load(args.state, weights_only=True))
    return module, example, state


def trace_train_step(args, module, example, state, timings):
    """The module converted to an ExportedProgram (export_s in `timings`), then its joint train
    step (export_train_step; joint_export_s). Returns export_train_step's triple. Call it under
    __main__'s static_shapes (and whatever else the caller's toolchain needs)."""
    import time

    from torch._export.converter import TS2EPConverter

    started = time.perf_counter()
    timings["mutations_removed"] = remove_mutations(module)
    exported = TS2EPConverter(module, example + state).convert()
    timings["export_s"] = time.perf_counter() - started
    started = time.perf_counter()
    loss_structure = json.loads(args.loss_structure) if args.loss_structure else None
    toolchain = "stablehlo" if args.format == "stablehlo" else "inductor"
    result = export_train_step(exported, example, state, args.parameter_count, args.amp,
                               loss_structure, toolchain, notes=timings,
                               buffers_in_place=toolchain == "inductor")
    timings["joint_export_s"] = time.perf_counter() - started
    return result


@contextlib.contextmanager
def export_failure_is_a_skip():
    """Any exception inside: its traceback and a one-line reason on stderr, then exit status
    EXPORT_FAILED, which the child turns into a SKIP record whose reason is that last line (the
    model's forward or an op the toolchain cannot export, not a broken toolchain)."""
    try:
        yield
    except Exception as error:
        traceback.print_exc()
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        print(f"benchmatrix_compile: the train step cannot be exported: "
              f"{type(error).__name__}: {message}", file=sys.stderr)
        raise SystemExit(EXPORT_FAILED)


def train_step_inductor_configs(metadata):
    """The AOTInductor configs of the train step's package: its `metadata`, and the pass that
    gives convolution_backward the forward's layout (conv_backward_layout.py) unless
    BENCHMATRIX_CONV_BACKWARD_LAYOUT=0. Returns (configs, that pass or None)."""
    configs = {"aot_inductor.metadata": metadata}
    layout_pass = ChannelsLastConvolutionBackward() if conv_backward_layout_enabled() else None
    if layout_pass is not None:
        configs["post_grad_custom_post_pass"] = layout_pass
    return configs, layout_pass


def compile_train_step(args, static_shapes):
    """The --train compile of __main__: loads args.torchscript, args.inputs and args.state, writes
    the train step's package to args.out; returns the phases' seconds. `static_shapes` is
    __main__'s context manager that keeps TS2EPConverter's shapes static."""
    import time

    timings = {}
    module, example, state = load_train_step_arguments(args, args.device)
    with export_failure_is_a_skip(), static_shapes():
        step_exported, updated_buffers, without_gradient = trace_train_step(
            args, module, example, state, timings)

    started = time.perf_counter()
    # Random ops (dropout) through the ATen kernels and the default generator, as eager draws them:
    # what PyTorch's dynamo harness compiles under --accuracy (benchmarks/dynamo/common.py sets
    # inductor fallback_random there; its --performance runs keep Inductor's own RNG). There, the
    # timed and the verified code are two compiles in two runs (and a torchbench model's accuracy
    # run is in eval mode: no dropout, BatchNorm on running statistics). Here they are one package
    # on purpose: the verifier child loads the cache entry the timing child ran (same recipe, same
    # key; the record's compile.package and verification.package name it), so a PASS speaks for
    # the code that was timed, in train mode with dropout masks and BatchNorm batch statistics.
    # The price: the timed step draws through ATen's kernels, not Inductor's fused RNG (on CUDA one
    # native_dropout kernel per dropout).
    torch._inductor.config.fallback_random = True
    metadata = {"benchmatrix_updated_buffers": "",
                "benchmatrix_buffers_updated_in_place": ",".join(map(str, updated_buffers)),
                "benchmatrix_parameters_without_gradient": ",".join(map(str, without_gradient))}
    inductor_configs, layout_pass = train_step_inductor_configs(metadata)
    torch._inductor.aoti_compile_and_package(
        step_exported, package_path=args.out, inductor_configs=inductor_configs)
    timings["aoti_compile_s"] = time.perf_counter() - started
    if layout_pass is not None:
        timings["conv_backward_channels_last"] = layout_pass.restated
    return timings
