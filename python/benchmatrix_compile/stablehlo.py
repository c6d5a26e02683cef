"""StableHLO export of the compile helper (`python -m benchmatrix_compile --format=stablehlo`).

ExportedProgram (the same TS2EPConverter output the inductor path compiles) -> torchax's JAX
interpreter (PyPI torchax, formerly torch_xla2: torchax.export.exported_program_to_jax) ->
jax.export for one platform (cpu or cuda, static shapes) -> a directory that a PJRT C API client
can compile and run without Python, JAX or protobuf:

    xla_program.json       what the C++ side reads (below)
    module.mlirbc          the StableHLO module as a portable artifact (MLIR bytecode), the
                           program PJRT_Client_Compile gets with format "mlir"
    module.mlir            the same module as text (for people and --save-ir-format stablehlo)
    compile_options.pb     a serialized xla.CompileOptionsProto (1 replica, 1 partition) made by
                           jax's xla_client, so the C++ side needs no protobuf
    weights.bin            the weights' raw bytes (little endian, row-major, 64-byte aligned)

xla_program.json: {"format": "benchmatrix-stablehlo-1", "platform", "module", "module_text",
"compile_options", "weights", "arguments": [{"kind": "weight"|"input"|"seed", "index", "dtype",
"shape", "offset", "bytes"}], "outputs": [{"dtype", "shape"}], "cuda_data_dir": path|null, "files":
{name: bytes}, "versions": {...}}, and for a train step (export_train_stablehlo) "train":
{"parameter_count", "state_count", "prediction_count", "updated_buffers": [...],
"parameters_without_gradient": [...]}.
`arguments` are the module's parameters in order: JAX drops unused ones (module_kept_var_idx), so
each names the weight (its bytes in weights.bin at offset), the model input (the index-th tensor
leaf; for a train step the index-th of (*parameters, *buffers, *inputs)) or the seed it is. dtypes
are numpy names (float32, bfloat16, int64, bool, ...).

The seed (train steps only, and only where the step draws random numbers, e.g. dropout): an int64
scalar from which the module derives torchax's PRNG key, so each call draws fresh numbers (the key
torchax would otherwise bake into the traced program makes every step draw the same mask). JAX's
generator is not torch's: the masks differ from eager's whatever the seed.
"""

import json
import os
import sys

import numpy


def _jax_for_export():
    import jax

    # Keep torch's integer and float64 dtypes as they are (JAX would narrow int64 to int32).
    jax.config.update("jax_enable_x64", True)
    return jax


def _dtype_name(dtype):
    return numpy.dtype(dtype).name


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return len(data)


def export_stablehlo(exported_program, example_inputs, device, out_dir, train=None):
    """Writes the export of `exported_program` (an ExportedProgram taking `example_inputs`, a tuple of
    tensors) for `device` ("cpu" or "cuda") into `out_dir`. Returns a dict of facts for the log.
    `train`: the train step's facts for xla_program.json (export_train_stablehlo); a train step also
    takes the seed of its random ops."""
    jax = _jax_for_export()
    import jaxlib
    import torch
    import torchax
    from torchax import export as torchax_export

    expand_pooling_arguments(exported_program)
    decompositions = embedding_bag_decompositions()
    decompositions.update(half_to_float_softmaxes())
    if train is not None:
        # The CUDA joint graph draws dropout's mask with aten.native_dropout (train_step.py's
        # _eager_dropout), a core ATen op torchax has no lowering for: torch's decomposition
        # into rand, lt and mul, which torchax lowers (with the seed's key); its rand_like
        # decomposed here, on the input's device (rand_like_on_its_device).
        native_dropout = torch.ops.aten.native_dropout.default
        decompositions[native_dropout] = torch._decomp.decomposition_table[native_dropout]
        decompositions.update(rand_like_on_its_device())
        decompositions.update(bernoulli_keeping_dtype())
    exported_program = exported_program.run_decompositions(decompositions)
    zero_dim_constants_as_numbers(exported_program)
    weights, function = torchax_export.exported_program_to_jax(exported_program)
    weights = [numpy.asarray(w) for w in weights]
    input_avals = tuple(jax.ShapeDtypeStruct(tuple(x.shape), torchax_to_numpy(x).dtype)
                        for x in example_inputs)
    weight_avals = [jax.ShapeDtypeStruct(w.shape, w.dtype) for w in weights]
    platform = "cuda" if device == "cuda" else "cpu"
    if train is None:
        exported = jax.export.export(jax.jit(function), platforms=[platform])(
            weight_avals, (input_avals,))
    else:
        env = torchax.default_env()
        train_step_lowerings()

        def seeded(weights, inputs, seed):
            with env.override_property(prng=jax.random.key(seed)):
                return function(weights, inputs)

        seed_aval = jax.ShapeDtypeStruct((), numpy.int64)
        exported = jax.export.export(jax.jit(seeded), platforms=[platform])(
            weight_avals, (input_avals,), seed_aval)

    os.makedirs(out_dir, exist_ok=True)
    files = {}
    files["module.mlirbc"] = _write(os.path.join(out_dir, "module.mlirbc"),
                                    bytes(exported.mlir_module_serialized))
    files["module.mlir"] = _write(os.path.join(out_dir, "module.mlir"),
                                  exported.mlir_module().encode("utf-8"))
    files["compile_options.pb"] = _write(os.path.join(out_dir, "compile_options.pb"),
                                         compile_options_bytes())

    # Flattened parameters of the jitted function: the weights, then the model inputs.
    flat = [("weight", i, w.dtype, w.shape) for i, w in enumerate(weights)]
    flat += [("input", i, a.dtype, a.shape) for i, a in enumerate(input_avals)]
    if train is not None:
        flat.append(("seed", 0, numpy.dtype(numpy.int64), ()))
    kept = sorted(exported.module_kept_var_idx)
    arguments = []
    offset = 0
    with open(os.path.join(out_dir, "weights.bin"), "wb") as blob:
        for index in kept:
            kind, which, dtype, shape = flat[index]
            argument = {"kind": kind, "index": which, "dtype": _dtype_name(dtype),
                        "shape": [int(d) for d in shape]}
            if kind == "weight":
                data = numpy.ascontiguousarray(weights[which]).tobytes()
                padding = (-offset) % 64
                blob.write(b"\0" * padding)
                offset += padding
                argument["offset"] = offset
                argument["bytes"] = len(data)
                blob.write(data)
                offset += len(data)
            arguments.append(argument)
    files["weights.bin"] = offset

    outputs = [{"dtype": _dtype_name(a.dtype), "shape": [int(d) for d in a.shape]}
               for a in exported.out_avals]
    program = {
        "format": "benchmatrix-stablehlo-1",
        "platform": platform,
        "module": "module.mlirbc",
        "module_text": "module.mlir",
        "compile_options": "compile_options.pb",
        "weights": "weights.bin",
        "arguments": arguments,
        "outputs": outputs,
        "cuda_data_dir": cuda_data_dir() if platform == "cuda" else None,
        "files": files,
        "versions": {"torch": torch.__version__, "jax": jax.__version__,
                     "jaxlib": jaxlib.__version__,
                     "torchax": getattr(torchax, "__version__", "unknown")},
    }
    if train is not None:
        program["train"] = train
    # Written last: its presence means the directory is complete.
    with open(os.path.join(out_dir, "xla_program.json"), "w", encoding="utf-8") as f:
        json.dump(program, f, indent=1)
    return {"platform": platform, "arguments": len(arguments), "weights_bytes": offset,
            "outputs": len(outputs), "module_bytes": files["module.mlirbc"]}


def export_train_stablehlo(args, static_shapes, attention):
    """The --train --format=stablehlo export of __main__: the joint train step of train_step.py
    (export_train_step: loss, prediction, every parameter's gradient and the updated buffers of
    forward(*parameters, *buffers, *inputs), the same graph the inductor train step compiles)
    exported to StableHLO in args.out as export_stablehlo writes it, "train" added to
    xla_program.json. The state is the module's inputs, not weights: the optimizer changes it.
    Exits with train_step.EXPORT_FAILED when the model's train step cannot be exported. Returns
    the phases' seconds. `static_shapes` and `attention` make __main__'s context managers
    (TS2EPConverter's static shapes; attention in its math form, which torchax lowers)."""
    import time

    import torch

    from benchmatrix_compile.train_step import (export_failure_is_a_skip,
                                                load_train_step_arguments, trace_train_step)

    timings = {}
    # As the eval export: on the GPU where there is one (CUDA constants of a CUDA trace), else CPU.
    device = args.device if args.device == "cuda" and torch.cuda.is_available() else "cpu"
    module, example, state = load_train_step_arguments(args, device)
    # A failure anywhere, the model's forward or an op torchax cannot lower: a SKIP record.
    with export_failure_is_a_skip():
        with static_shapes(), attention():
            step_exported, updated_buffers, without_gradient = trace_train_step(
                args, module, example, state, timings)
        started = time.perf_counter()
        prediction_count = (len(step_exported.graph_signature.user_outputs) - 1
                            - args.parameter_count - len(updated_buffers))
        train = {"parameter_count": args.parameter_count, "state_count": len(state),
                 "prediction_count": prediction_count, "updated_buffers": updated_buffers,
                 "parameters_without_gradient": without_gradient}
        with attention():
            timings.update(export_stablehlo(step_exported, state + example, args.device, args.out,
                                            train=train))
        timings["stablehlo_export_s"] = time.perf_counter() - started
    return timings


def train_step_lowerings():
    """What torchax (0.0.13) lacks for a joint train graph, added to its registry for this
    process: aten.convolution_backward (no lowering: dcgan, resnets) as the VJP of torchax's own
    convolution lowering; aten.max_pool2d_with_indices_backward as the VJP of its max pooling
    (its own lowering spreads each gradient over the whole window instead of the maximum, in a
    Python loop per element: minutes of tracing); avg_pool2d_backward and
    _adaptive_avg_pool2d_backward (no lowering: resnets, mobilenets) as the VJPs of its average
    poolings; and the environment for ops that draw random numbers (bernoulli,
    dropout's mask), which its JaxInterpreter calls without one (AttributeError "'NoneType'
    object has no attribute 'get_and_rotate_prng_key'")."""
    import jax
    import jax.numpy as jnp
    import torch
    import torchax
    from torchax import export as torchax_export
    from torchax.ops import jaten, ops_registry

    backward = torch.ops.aten.convolution_backward.default
    if backward not in ops_registry.all_aten_ops:
        def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                                 transposed, output_padding, groups, output_mask):
            def convolution(x, w):
                return jaten._aten_convolution(x, w, None, stride, padding, dilation, transposed,
                                               output_padding, groups)

            _, vjp = jax.vjp(convolution, input, weight)
            grad_input, grad_weight = vjp(grad_output.astype(input.dtype))
            grad_bias = None
            if output_mask[2]:
                grad_bias = jnp.sum(grad_output, axis=(0, *range(2, grad_output.ndim)))
            return (grad_input if output_mask[0] else None,
                    grad_weight if output_mask[1] else None, grad_bias)

        ops_registry.register_torch_dispatch_op(backward, convolution_backward)

    pool_backward = torch.ops.aten.max_pool2d_with_indices_backward.default
    if not getattr(jaten, "benchmatrix_max_pool2d_backward", False):
        def max_pool2d_backward(grad_output, input, kernel_size, stride, padding, dilation,
                                ceil_mode, indices):
            def pool(x):
                return jaten.max_pool(x, kernel_size, stride, padding, dilation, ceil_mode)

            _, vjp = jax.vjp(pool, input)
            return vjp(grad_output.astype(input.dtype))[0]

        jaten.benchmatrix_max_pool2d_backward = True  # replaced once per process
        ops_registry.all_aten_ops.pop(pool_backward, None)
        ops_registry.all_aten_ops.pop(pool_backward.overloadpacket, None)
        ops_registry.register_torch_dispatch_op(pool_backward, max_pool2d_backward)

    def pooling_vjp(grad_output, input, pool):
        _, vjp = jax.vjp(pool, input)
        return vjp(grad_output.astype(input.dtype))[0]

    def avg_pool2d_backward(grad_output, input, kernel_size, stride, padding, ceil_mode,
                            count_include_pad, divisor_override=None):
        return pooling_vjp(grad_output, input, lambda x: jaten._aten_avg_pool(
            x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override))

    def adaptive_avg_pool2d_backward(grad_output, input):
        size = tuple(grad_output.shape[-2:])
        return pooling_vjp(grad_output, input,
                           lambda x: jaten.adaptive_avg_pool2or3d(x, size))

    for aten_op, lowering in ((torch.ops.aten.avg_pool2d_backward.default, avg_pool2d_backward),
                              (torch.ops.aten._adaptive_avg_pool2d_backward.default,
                               adaptive_avg_pool2d_backward)):
        if aten_op not in ops_registry.all_aten_ops:
            ops_registry.register_torch_dispatch_op(aten_op, lowering)

    interpreter = torchax_export.JaxInterpreter
    if not getattr(interpreter, "benchmatrix_passes_env", False):
        call_function = interpreter.call_function

        def call_function_with_env(self, target, args, kwargs):
            op = None
            if isinstance(target, (torch._ops.OpOverloadPacket, torch._ops.OpOverload)):
                op = ops_registry.all_aten_ops.get(target) or ops_registry.all_aten_ops.get(
                    getattr(target, "overloadpacket", None))
            if op is not None and op.needs_env:
                kwargs = dict(kwargs, env=torchax.default_env())
            return call_function(self, target, args, kwargs)

        interpreter.call_function = call_function_with_env
        interpreter.benchmatrix_passes_env = True


def bernoulli_keeping_dtype():
    """A decomposition of aten.bernoulli.p (bernoulli_(p) once functionalized: the noise of ATen's
    in-place dropout, which CUDA runs for Dropout(inplace=True) instead of native_dropout) that
    returns the input's dtype, as ATen does. torchax 0.0.13 lowers it to a boolean mask, the
    dropout's div_ then makes float32 noise and its mul_ a float32 activation, so under float16
    autocast everything after an in-place dropout left float16 (mobilenet_v3_large's prediction
    came out float32, eager's float16). Drawn with rand, which torchax lowers with the seed's key."""
    import torch

    def bernoulli(self, p=0.5, *, generator=None):
        return (torch.rand(self.shape, dtype=torch.float32, device=self.device) < p).to(self.dtype)

    return {torch.ops.aten.bernoulli.p: bernoulli}


def rand_like_on_its_device():
    """A decomposition of aten.rand_like into aten.rand on the tensor's own device. torch's
    native_dropout decomposition draws its mask with rand_like, and torchax's decomposition of
    rand_like (torchax/decompositions.py, applied by exported_program_to_jax after this module's
    table) is torch.rand(shape, dtype) without the device: a CPU tensor. In a CUDA train step that
    CPU mask meets the CUDA input, and the export fails for every model with dropout ("Unhandled
    FakeTensor Device Propagation for aten.mul.Tensor, found two different devices cpu, cuda:0";
    on the CPU both were CPU tensors). Decomposed here first, rand keeps the device, and torchax
    lowers it (ignoring the device) with the seed's PRNG key as before."""
    import torch

    def rand_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                  memory_format=None):
        # layout, pinning and memory format: nothing a JAX array has (torchax drops them too).
        return torch.rand(self.shape, dtype=self.dtype if dtype is None else dtype,
                          device=self.device if device is None else device)

    return {torch.ops.aten.rand_like.default: rand_like}


def half_to_float_softmaxes():
    """Decompositions of aten._softmax and aten._log_softmax with half_to_float=True (a float16
    input, a float32 result: what autocast runs for softmax and log_softmax on CUDA, so every
    train step under float16 autocast has them) into the float32 input's softmax. torchax 0.0.13
    lowers both ignoring the flag: the softmax ran in float16 and returned float16, and
    BERT_pytorch's openxla train step FAILed --verify ("dtype mismatch Float, Half" on its
    log-probabilities). The same op without the flag is left to torchax (NotImplemented: the
    tracer then records the op itself)."""
    import torch

    def on_float32(op):
        def decomposition(x, dim, half_to_float):
            if not half_to_float:
                return NotImplemented
            return op(x.to(torch.float32), dim, False)
        return decomposition

    softmax, log_softmax = torch.ops.aten._softmax.default, torch.ops.aten._log_softmax.default
    return {softmax: on_float32(softmax), log_softmax: on_float32(log_softmax)}


def zero_dim_constants_as_numbers(exported_program):
    """A traced program's Python numbers (`0.5 * x`, GELU's 0.044715) are zero-dimensional float64
    tensor constants, which TS2EPConverter lifts as constants of the program. In torch a
    zero-dimensional tensor does not promote a higher-dimensional operand of its category
    (bfloat16 * float64[] is bfloat16); torchax lowers it as a JAX array, and JAX promotes
    (bf16 * f64 -> f64): an imported GPT2's GELU ran in float64 and its logits came out float64.
    Each such constant of mul/add/sub/div (and pow's exponent) whose other operand is a floating
    tensor of at least one dimension becomes the Python number it was, which both torch and JAX
    treat as a weak scalar. Returns how many uses were replaced."""
    import torch

    aten = torch.ops.aten
    binary = {aten.mul.Tensor: aten.mul.Tensor, aten.add.Tensor: aten.add.Tensor,
              aten.sub.Tensor: aten.sub.Tensor, aten.div.Tensor: aten.div.Tensor,
              aten.pow.Tensor_Tensor: aten.pow.Tensor_Scalar}
    lifted = exported_program.graph_signature.inputs_to_lifted_tensor_constants
    numbers = {}
    for node in exported_program.graph_module.graph.nodes:
        if node.op != "placeholder" or node.name not in lifted:
            continue
        value = exported_program.constants.get(lifted[node.name])
        if isinstance(value, torch.Tensor) and value.dim() == 0 and value.is_floating_point():
            numbers[node] = float(value)

    def spread_tensor(argument):
        value = argument.meta.get("val") if isinstance(argument, torch.fx.Node) else None
        return isinstance(value, torch.Tensor) and value.dim() > 0 and value.is_floating_point()

    replaced = 0
    for node in exported_program.graph_module.graph.nodes:
        if node.op != "call_function" or node.target not in binary or len(node.args) != 2:
            continue
        first, second = node.args
        positions = [1] if node.target is aten.pow.Tensor_Tensor else [0, 1]
        for position in positions:
            constant, other = (first, second) if position == 0 else (second, first)
            if constant in numbers and spread_tensor(other):
                args = list(node.args)
                args[position] = numbers[constant]
                if position == 0:  # number first: only the commutative ops keep their meaning
                    if node.target not in (aten.mul.Tensor, aten.add.Tensor):
                        break
                    args.reverse()
                node.args = tuple(args)
                node.target = binary[node.target]
                replaced += 1
                break
    exported_program.graph_module.recompile()
    return replaced


def expand_pooling_arguments(exported_program):
    """LibTorch's tracer records 2-d pooling windows given as one int as 1-element lists
    (max_pool2d(x, [3], [2], [1], [1])), which aten broadcasts but torchax's lowering zips with the
    spatial dims (resnet18: "safe_zip() argument 1 has length 3 but argument 0 has length 4"):
    make them 2-element lists."""
    import torch

    aten = torch.ops.aten
    window_arguments = {aten.max_pool2d_with_indices.default: (1, 2, 3, 4),
                        aten.max_pool2d_with_indices_backward.default: (2, 3, 4, 5),
                        aten.max_pool2d.default: (1, 2, 3, 4),
                        aten.avg_pool2d.default: (1, 2, 3),
                        aten.avg_pool2d_backward.default: (2, 3, 4)}
    for node in exported_program.graph_module.graph.nodes:
        positions = window_arguments.get(node.target) if node.op == "call_function" else None
        if not positions:
            continue
        args = list(node.args)
        for i in positions:
            if i < len(args) and isinstance(args[i], (list, tuple)) and len(args[i]) == 1:
                args[i] = [args[i][0], args[i][0]]
        node.args = tuple(args)
    exported_program.graph_module.recompile()


def embedding_bag_decompositions():
    """torch.export decompositions of aten._embedding_bag(_forward_only) into gathers and an
    index_add over static shapes. torchax's lowering loops over the bags in Python and reads the
    offsets' values, which a traced (jitted) program does not have (dlrm: "TracerArrayConversionError
    ... int64[2048]"). Bag sums accumulate in float32 at least, as torch's kernels do (acc_type).
    Only the first result (the bags) keeps torch's meaning: offset2bag, bag_size and max_indices
    are left as the bag of each index, the count per bag and zeros, which inference never reads."""
    import torch

    aten = torch.ops.aten

    def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                      per_sample_weights=None, include_last_offset=False, padding_idx=-1):
        if indices.dim() != 1 or offsets.dim() != 1:
            raise NotImplementedError("embedding_bag decomposition: 1-d indices and offsets")
        bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
        positions = torch.arange(indices.shape[0], device=indices.device, dtype=offsets.dtype)
        # The bag of index i: the last bag starting at or before i. Integer positions make
        # searchsorted(right=True) the left one at i + 1 (torchax lowers only the left one).
        bag_of = torch.searchsorted(offsets[:bags].contiguous(), positions + 1) - 1
        accumulate = torch.promote_types(weight.dtype, torch.float32)
        rows = aten.embedding.default(weight, indices).to(accumulate)
        if per_sample_weights is not None:
            rows = rows * per_sample_weights.to(accumulate).unsqueeze(1)
        counted = (indices != padding_idx) if padding_idx >= 0 else torch.ones_like(indices, dtype=torch.bool)
        counts = torch.zeros(bags, dtype=torch.int64, device=indices.device).index_add(
            0, bag_of, counted.to(torch.int64))
        width = weight.shape[1]
        if mode == 2:  # max; an empty bag is zeros, as in torch
            rows = torch.where(counted.unsqueeze(1), rows, torch.tensor(float("-inf"), dtype=accumulate,
                                                                        device=rows.device))
            bags_out = torch.zeros(bags, width, dtype=accumulate, device=rows.device).scatter_reduce(
                0, bag_of.unsqueeze(1).expand(-1, width), rows, "amax", include_self=False)
            bags_out = torch.where(counts.unsqueeze(1) > 0, bags_out, torch.zeros_like(bags_out))
        else:
            rows = rows * counted.to(accumulate).unsqueeze(1)
            bags_out = torch.zeros(bags, width, dtype=accumulate, device=rows.device).index_add(
                0, bag_of, rows)
            if mode == 1:  # mean over the counted indices
                bags_out = bags_out / counts.clamp(min=1).to(accumulate).unsqueeze(1)
        max_indices = torch.zeros(bags, dtype=torch.int64, device=indices.device)
        return bags_out.to(weight.dtype), bag_of, counts, max_indices

    # On top of export's default (core ATen) table: it turns embedding_bag(.padding_idx) into
    # _embedding_bag_forward_only, which this one then replaces.
    table = torch.export.default_decompositions()
    table[aten._embedding_bag_forward_only.default] = embedding_bag
    table[aten._embedding_bag.default] = embedding_bag
    return table


def torchax_to_numpy(tensor):
    """A CPU numpy array of `tensor` (bfloat16 through ml_dtypes, which jax depends on)."""
    import torch

    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        import ml_dtypes

        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.numpy()


def compile_options_bytes():
    """A serialized xla.CompileOptionsProto for one device (1 replica, 1 partition), without
    DebugOptions: jax's CompileOptions carry the DebugOptions that this helper's XLA_FLAGS gave, which
    would then override the running child's. Without them, XLA takes its debug options from the
    flags of the process that compiles (CreateDefaultExecutionOptions -> GetDebugOptionsFromFlags), so
    --xla-flags and --dump-hlo reach the plugin, and the cached export does not depend on XLA_FLAGS.
    The one debug option jax derives from its installation, the CUDA data directory
    (xla_gpu_cuda_data_dir: ptxas and libdevice of the pip CUDA packages), goes into
    xla_program.json instead (cuda_data_dir), for the child to pass as a flag."""
    from jax._src import compiler

    options = compiler.get_compile_options(num_replicas=1, num_partitions=1)
    return without_debug_options(options.SerializeAsString())


def cuda_data_dir():
    """The directory jax gives XLA as xla_gpu_cuda_data_dir (its pip CUDA packages), or None."""
    from jax._src import lib as jax_lib

    return getattr(jax_lib, "cuda_path", None)


# Field numbers of xla/pjrt/proto/compile_options.proto.
_EXECUTABLE_BUILD_OPTIONS = 3  # CompileOptionsProto.executable_build_options
_DEBUG_OPTIONS = 3             # ExecutableBuildOptionsProto.debug_options
_LENGTH_DELIMITED = 2          # protobuf wire type of messages, strings and bytes


def _varint(data, position):
    value = shift = 0
    while True:
        if position >= len(data):
            raise ValueError("truncated protobuf varint")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, position


def _encode_varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _fields(data):
    """(field number, wire type, the field's bytes including its tag, its payload) of each field of a
    serialized message, in order."""
    position = 0
    while position < len(data):
        start = position
        tag, position = _varint(data, position)
        number, wire_type = tag >> 3, tag & 7
        payload_start = position
        if wire_type == 0:
            _, position = _varint(data, position)
        elif wire_type == 1:
            position += 8
        elif wire_type == 5:
            position += 4
        elif wire_type == _LENGTH_DELIMITED:
            length, payload_start = _varint(data, position)
            position = payload_start + length
        else:
            raise ValueError(f"unsupported protobuf wire type {wire_type} (field {number})")
        if position > len(data):
            raise ValueError(f"truncated protobuf field {number}")
        yield number, wire_type, data[start:position], data[payload_start:position]


def without_debug_options(compile_options):
    """`compile_options` (a serialized CompileOptionsProto) with its
    executable_build_options.debug_options removed, everything else byte for byte."""
    out = bytearray()
    for number, wire_type, field, payload in _fields(compile_options):
        if number != _EXECUTABLE_BUILD_OPTIONS or wire_type != _LENGTH_DELIMITED:
            out += field
            continue
        build_options = b"".join(inner for inner_number, inner_type, inner, _ in _fields(payload)
                                 if not (inner_number == _DEBUG_OPTIONS
                                         and inner_type == _LENGTH_DELIMITED))
        out += _encode_varint(_EXECUTABLE_BUILD_OPTIONS << 3 | _LENGTH_DELIMITED)
        out += _encode_varint(len(build_options)) + build_options
    return bytes(out)


def load_program(directory):
    with open(os.path.join(directory, "xla_program.json"), encoding="utf-8") as f:
        return json.load(f)


def run_with_jax(directory, inputs, seed=0):
    """Runs an exported directory on JAX's CPU client the way the C++ PJRT backend does (the module
    bytecode, the compile options, weights.bin and the kept arguments in order). `inputs`: the model
    input tensors' numpy arrays (a train step's: the parameters, buffers, then the inputs); `seed`:
    a train step's seed argument, where it kept one. Returns the outputs as numpy arrays. For
    tests."""
    jax = _jax_for_export()
    from jax.extend import backend as jax_backend

    program = load_program(directory)
    with open(os.path.join(directory, program["module"]), "rb") as f:
        module = f.read()
    with open(os.path.join(directory, program["weights"]), "rb") as f:
        blob = f.read()
    client = jax_backend.get_backend(program["platform"])
    device = client.local_devices()[0]
    from jax._src.lib import xla_client

    with open(os.path.join(directory, program["compile_options"]), "rb") as f:
        options = xla_client.CompileOptions.ParseFromString(f.read())
    executable = client.compile_and_load(module, xla_client.DeviceList((device,)), options)
    arguments = []
    for argument in program["arguments"]:
        dtype = _numpy_dtype(argument["dtype"])
        if argument["kind"] == "seed":
            value = numpy.asarray(seed, dtype=dtype)
        elif argument["kind"] == "weight":
            value = numpy.frombuffer(blob, dtype=dtype, count=int(numpy.prod(argument["shape"])),
                                     offset=argument["offset"]).reshape(argument["shape"])
        else:
            value = numpy.asarray(inputs[argument["index"]]).astype(dtype, copy=False)
        arguments.append(jax.device_put(value, device))
    outputs = executable.execute(arguments)
    return [numpy.asarray(o) for o in outputs]


def _numpy_dtype(name):
    if name == "bfloat16":
        import ml_dtypes

        return numpy.dtype(ml_dtypes.bfloat16)
    return numpy.dtype(name)
