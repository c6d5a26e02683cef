"""Import helper of experiment_runner (run as `python -m benchmatrix_import`): builds one model of
the huggingface or timm_models suite as PyTorch's dynamo harness does (benchmarks/dynamo/
huggingface.py, timm_models.py), or --suite=torchbench one model of the user's TorchBench checkout
(--torchbench-dir; torchbench_checkout.py says how, as torchbench.py builds it), and writes what
the C++ child loads with torch::jit::load; or,
--suite=exported, prepares a user's torch.export package (.pt2) for the run's device and dtype
(exported_package.py).

Built as PyTorch builds it, with two differences that keep the run offline and checkable:
  - random weights and default configs (timm: pretrained=False; transformers: <Class>.config_class()),
    so nothing is downloaded; PyTorch's EXTRA_MODELS that need a hub config (T5Small, DistillGPT2,
    ...) are not buildable here and the helper says so;
  - transformers: the config's dropout probabilities are set to 1e-30 before the model is built
    (PyTorch sets them after, when most layers already hold their own p), so that a train step's
    output does not depend on the dropout mask and --verify can compare it.

Output, in <cache-dir>/<key>/ (key: SHA-256 of suite, model, package versions, batch size, dtype,
device, test, config overrides, --traced-for and this file's source; reused when present):
  model.pt     torch.jit.trace of a wrapper whose forward(*tensors) takes the example inputs
               positionally and returns a tuple of tensors (transformers: the model's
               return_dict=False tuple, the loss first as labels are passed; for train only
               the loss, which PyTorch's compute_loss takes as pred[0]; timm: the logits, whose
               reduce_to_scalar_loss the train step takes, as PyTorch), traced in the test's mode
               (train/eval) on the device, in the dtype, with the attention masks of the
               eager forward (eager_mask_decisions) or, --traced-for=compiler, those
               torch.compile sees; its shape arithmetic folded to the
               traced sizes (traced_sizes_as_constants, and shape_arithmetic_folded for its
               in-place ops), the constants of what is left of it on the CPU
               (shape_arithmetic_on_cpu); a float32 program's mask fills
               beyond float16's range made float16's extremes (float16_fill_values).
  inputs.pt    torch.save'd tuple of the example tensors (CPU), as benchmatrix_compile's --inputs.
  manifest.json  what was built: model, class, versions, batch size, input names and shapes, the
               loss rule ("first_output" or "reduce_to_scalar_loss"), parameter count, traced_for
               (eager or compiler; "either" for timm, whose programs hold no attention masks).
  exported.pt2 with --exported-program (eval only): the same forward exported by torch.export
               (non-strict, static shapes), which the inductor backend compiles without a
               TorchScript round trip; added to an entry that lacks it. Where torch.export fails,
               exported.pt2.failed says why instead (the inductor backend then converts the
               TorchScript program).
--suite=exported --program FILE.pt2 [--inputs FILE.inputs.pt]: the entry holds exported.pt2 (the
user's program moved to --device and cast to --dtype, exported again), inputs.pt (its example
inputs: --inputs, else those the package stores) and manifest.json; the key hashes the files'
bytes instead of package versions and a batch size.
The entry's directory is written to --result. Exit status 0 on success; 1 on failure (the
traceback on stderr); 2 for bad arguments; 3 for a model that cannot be built offline (a download,
a missing package or file: the last line says which); 4 for a torch that differs from the child's
LibTorch; 5 for a model that does not implement the test (TorchBench's NotImplementedError).
"""

import argparse
import contextlib
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile

from benchmatrix_import.exported_package import (FAILURE_NAME, PACKAGE_NAME, UnusablePackage,
                                                 convert_user_package,
                                                 write_exported_program_or_why)
from benchmatrix_import.torchbench_checkout import (NotImplementedForTest, build_torchbench,
                                                    checkout_revision, model_sources_digest,
                                                    tensor_inputs)

SUITES = ("huggingface", "timm_models", "torchbench", "exported")
UNBUILDABLE = 3
NOT_IMPLEMENTED_FOR_TEST = 5


class Unbuildable(Exception):
    """A model this helper cannot build on this machine (exit status 3): a download, a package or
    data set that is not here, or an installed package of another version than the model's."""


class Untraceable(Exception):
    """A model torch.jit.trace cannot record (data-dependent control flow, a Python value the
    tracer refuses): exit status 3, as the runner's every backend loads the traced program."""


# The models whose eval runs with autograd enabled (PyTorch's benchmarks/dynamo/torchbench.py
# pick_grad names maml alone).
EVAL_WITH_GRAD = {"maml"}


def untraceable(model, error):
    """Untraceable naming the error and the innermost line outside torch where it was raised
    (the model's own code, where the fix or the reason lies)."""
    import traceback

    import torch

    torch_root = os.path.dirname(torch.__file__)
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not f.filename.startswith(torch_root)]
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return Untraceable(f"{model} cannot be traced by torch.jit.trace{where}: "
                       f"{type(error).__name__}: {message}")


class NotEnoughDisk(Exception):
    """The cache's file system cannot hold the program (exit status 1, this message): without the
    check torch.jit.save fails inside its C++ writer, which ends the process with SIGABRT and a
    backtrace instead of saying why."""


def parse_arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmatrix_import", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", required=True, choices=SUITES)
    parser.add_argument("--model", required=True, help="model name as the suite's list spells it")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="required for huggingface and timm_models; an exported program's "
                             "inputs fix its batch")
    parser.add_argument("--program", default=None,
                        help="--suite=exported: the user's torch.export package (.pt2)")
    parser.add_argument("--inputs", default=None,
                        help="--suite=exported: its example inputs, a torch.save'd tuple of "
                             "tensors (default: those the package stores)")
    parser.add_argument("--torchbench-dir", default=None,
                        help="--suite=torchbench: the TorchBench checkout (the folder holding "
                             "torchbenchmark/); the model is torchbenchmark.models.<--model>")
    parser.add_argument("--random-weights", action="store_true",
                        help="--suite=torchbench: build torchvision and timm models with random "
                             "weights instead of downloading pretrained ones")
    parser.add_argument("--exported-program", action="store_true",
                        help="eval: also write exported.pt2, the forward exported by "
                             "torch.export (exported_package.py), for the inductor backend")
    parser.add_argument("--test", required=True, choices=["eval", "train"])
    parser.add_argument("--device", required=True, choices=["cpu", "cuda"])
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "float64", "float16", "bfloat16"])
    parser.add_argument("--traced-for", default="eager", choices=["eager", "compiler"],
                        help="eager (default): transformers' attention masks as its eager forward "
                             "builds them for the example inputs (eager_mask_decisions); compiler: "
                             "as torch.compile sees the model (every mask transformers builds "
                             "under a tracer), for a graph backend's program")
    parser.add_argument("--overrides", default=None,
                        help="YAML file: <model>: {config or create_model keyword: value}; "
                             "timm also takes input_size: [C, H, W] (for reduced test models)")
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--result", required=True, help="file receiving the entry's directory")
    parser.add_argument("--expect-torch-version", default=None)
    args = parser.parse_args(argv)
    if args.suite == "exported":
        if not args.program:
            parser.error("--suite=exported needs --program")
        if args.test == "train":
            parser.error("--suite=exported: a torch.export program has no train step here "
                         "(torch::nativert, which runs it, has no autograd)")
    elif args.suite == "torchbench":
        if not args.torchbench_dir:
            parser.error("--suite=torchbench needs --torchbench-dir")
        if not os.path.isfile(os.path.join(args.torchbench_dir, "torchbenchmark", "__init__.py")):
            parser.error(f"--torchbench-dir={args.torchbench_dir} holds no "
                         "torchbenchmark/__init__.py (expected a pytorch/benchmark checkout)")
    elif args.batch_size is None:
        parser.error(f"--suite={args.suite} needs --batch-size")
    if args.exported_program and (args.test == "train" or args.traced_for != "compiler"):
        parser.error("--exported-program is for --test=eval --traced-for=compiler (torch.export "
                     "sees the model as torch.compile does)")
    return args


def model_overrides(path, model):
    if not path:
        return {}
    import yaml

    with open(path) as f:
        document = yaml.safe_load(f) or {}
    if not isinstance(document, dict):
        raise ValueError(f"{path}: expected a mapping <model>: {{keyword: value}}")
    entry = document.get(model) or {}
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: {model}: expected a mapping of keyword: value")
    return entry


def package_versions(suite):
    """The installed versions, from the packages' metadata: a cache hit imports neither torch
    nor transformers (seconds each)."""
    from importlib.metadata import PackageNotFoundError, version

    if suite == "exported":
        return {"torch": version("torch")}
    if suite == "torchbench":  # the packages TorchBench's model families build on, where present
        versions = {"torch": version("torch")}
        for package in ("torchvision", "torchaudio", "timm", "transformers"):
            try:
                versions[package] = version(package)
            except PackageNotFoundError:
                versions[package] = None
        return versions
    package = "transformers" if suite == "huggingface" else "timm"
    return {"torch": version("torch"), package: version(package)}


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 24), b""):
            digest.update(chunk)
    return digest.hexdigest()


def helper_sources_digest():
    """This helper's code: its entries are rebuilt when it changes."""
    here = os.path.dirname(os.path.abspath(__file__))
    return hashlib.sha256(b"".join(
        open(os.path.join(here, name), "rb").read()
        for name in ("__main__.py", "exported_package.py", "torchbench_checkout.py"))).hexdigest()


def cache_key(args, versions, overrides):
    if args.suite == "exported":  # the user's files, by their bytes (their path may be reused)
        fields = {"suite": args.suite, "program": file_sha256(args.program),
                  "inputs": file_sha256(args.inputs) if args.inputs else None,
                  "versions": versions, "dtype": args.dtype, "device": args.device,
                  "helper": helper_sources_digest()}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32]
    fields = {"suite": args.suite, "model": args.model, "versions": versions,
              "batch_size": args.batch_size, "dtype": args.dtype, "device": args.device,
              "test": args.test, "overrides": overrides,
              # only transformers' masks depend on it (a TorchBench checkout has hf_* models): a
              # timm program is the same either way, and an inductor child hits the eager
              # children's entry
              "traced_for": args.traced_for if args.suite in ("huggingface", "torchbench")
              else None,
              "helper": helper_sources_digest()}
    if args.suite == "torchbench":  # the checkout's code for the model, committed or not
        fields.update(checkout=os.path.abspath(args.torchbench_dir),
                      revision=checkout_revision(args.torchbench_dir),
                      model_sources=model_sources_digest(args.torchbench_dir, args.model),
                      random_weights=args.random_weights)
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32]


def reset_rng_state():
    """PyTorch's common.reset_rng_state: seed 1337 before the model and its inputs are made."""
    import random

    import numpy
    import torch

    torch.manual_seed(1337)
    random.seed(1337)
    numpy.random.seed(1337)


# huggingface.py's get_sequence_length
def sequence_length(model_name):
    if model_name.startswith("Blenderbot"):
        return 128
    if model_name.startswith(("GPT2", "Bart", "T5", "PLBart", "MBart")):
        return 1024
    if model_name in ("AllenaiLongformerBase", "BigBird"):
        return 1024
    if model_name.startswith("OPT"):
        return 2048
    if model_name.startswith(("Albert", "Deberta", "Layout", "Electra", "XLNet", "MegatronBert",
                              "Bert", "Roberta")) or model_name in (
                                  "DistillGPT2", "GoogleFnet", "YituTechConvBert"):
        return 512
    if model_name == "TrOCRForCausalLM":
        return 256
    if model_name.startswith("MobileBert"):
        return 128
    return 128


# huggingface.py's EXTRA_MODELS: their configs come from the hub (AutoConfig.from_pretrained)
HUB_CONFIG_MODELS = {"AllenaiLongformerBase": "allenai/longformer-base-4096",
                     "T5Small": "t5-small", "DistillGPT2": "distilgpt2",
                     "GoogleFnet": "google/fnet-base", "YituTechConvBert": "YituTech/conv-bert-base"}


def build_huggingface(model_name, batch_size, device, overrides):
    import torch
    import transformers

    if "/" in model_name or model_name in HUB_CONFIG_MODELS:
        hub = HUB_CONFIG_MODELS.get(model_name, model_name)
        raise Unbuildable(f"{model_name}: its config is the hub's {hub} (a download); "
                          "benchmatrix builds models offline from default configs")
    model_cls = getattr(transformers, model_name, None)
    if model_cls is None:
        raise Unbuildable(f"transformers {transformers.__version__} has no class {model_name}")
    config = model_cls.config_class()
    if model_name.startswith(("GPT2ForSequenceClassification", "GPTNeoForSequenceClassification",
                              "GPTJForSequenceClassification", "Roberta", "Marian")):
        config.pad_token_id = 0  # huggingface.py: some models need a pad token for batch > 1
    for attribute in dir(config):
        if "drop" in attribute and isinstance(getattr(config, attribute, None), float):
            setattr(config, attribute, 1e-30)
    for keyword, value in overrides.items():
        if not hasattr(config, keyword):
            raise ValueError(f"overrides: {type(config).__name__} has no attribute {keyword}")
        setattr(config, keyword, value)
    if hasattr(config, "use_cache"):
        config.use_cache = False
    # The attention transformers picks by default (SDPA where the model supports it, else its
    # eager attention), as PyTorch's harness builds these models: the trace holds
    # aten::scaled_dot_product_attention, whose kernel (flash, memory-efficient, math) is chosen
    # when the program runs. Until issue 25's SDPA change this forced the eager attention, which made the
    # imported hf_Bert and hf_GPT2 1.3-1.4x slower than their hand-written SDPA ports on an H200.
    reset_rng_state()
    model = model_cls(config).to(device)
    seq = sequence_length(model_name)
    # a config that caps positions (tests shrink max_position_embeddings) caps the sequence;
    # XLNet's relative positions have no cap and its config says -1
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        seq = min(seq, positions)
    vocab = config.vocab_size

    def rand_int(low, high, shape):
        return torch.randint(low, high, shape, device=device, dtype=torch.int64)

    inputs = {"input_ids": rand_int(0, 1 if model_name.startswith("Roberta") else vocab,
                                    (batch_size, seq))}
    if "Bart" in model_name:
        inputs["input_ids"][:, -1] = config.eos_token_id
    # huggingface.py passes decoder_input_ids to these (and to Blenderbot/BlenderbotSmall/Pegasus/
    # Marian *Model and MarianMTModel, none in the list); the other seq2seq classes derive them
    # from the labels (shift_tokens_right), as there
    if model_name.startswith(("T5", "M2M100", "MT5")) or model_name in (
            "BlenderbotForConditionalGeneration", "BlenderbotModel", "BlenderbotSmallModel",
            "PegasusModel", "MarianModel", "MarianMTModel"):
        inputs["decoder_input_ids"] = inputs["input_ids"]
    if model_name.endswith("QuestionAnswering"):
        inputs["start_positions"] = rand_int(0, seq, (batch_size,))
        inputs["end_positions"] = rand_int(0, seq, (batch_size,))
    elif model_name.endswith(("MaskedLM", "HeadModel", "CausalLM", "DoubleHeadsModel")):
        inputs["labels"] = rand_int(0, vocab, (batch_size, seq))
    elif model_name.endswith("SequenceClassification"):
        inputs["labels"] = rand_int(0, config.num_labels - 1, (batch_size,))
    elif model_name.endswith("ForConditionalGeneration"):
        inputs["labels"] = rand_int(0, vocab - 1, (batch_size, seq))
    else:
        raise Unbuildable(f"{model_name}: huggingface.py gives no training labels for this class")
    names = list(inputs)

    class PositionalForward(torch.nn.Module):
        """forward(*tensors) in `names` order -> the model's return_dict=False tuple."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, *tensors):
            return self.model(**dict(zip(names, tensors)), return_dict=False)

    return PositionalForward(model), tuple(inputs.values()), names, "first_output", \
        type(model).__name__


def build_timm(model_name, batch_size, device, overrides):
    import timm
    import torch
    from timm.data import resolve_data_config

    overrides = dict(overrides)
    input_size = overrides.pop("input_size", None)
    reset_rng_state()
    try:
        model = timm.create_model(model_name, in_chans=3, scriptable=False, num_classes=None,
                                  drop_rate=0.0, drop_path_rate=None, drop_block_rate=None,
                                  pretrained=False, **overrides)
    except RuntimeError as e:
        if "Unknown model" in str(e):
            raise Unbuildable(f"timm {timm.__version__}: {e}") from e
        raise
    model = model.to(device)
    if input_size is None:
        input_size = resolve_data_config({}, model=model)["input_size"]
    # timm_models.py: random 0..255 pixels, normalised by their own mean and deviation
    torch.manual_seed(1337)
    pixels = torch.randint(256, size=(batch_size,) + tuple(input_size), device=device).float()
    image = (pixels - pixels.mean()) / pixels.std()
    return model, (image,), ["image"], "reduce_to_scalar_loss", type(model).__name__


@contextlib.contextmanager
def eager_mask_decisions():
    """While a program is traced, transformers' masking_utils decides whether a model can do
    without its attention mask as the eager forward decides for the example inputs. The suites'
    inputs, as huggingface.py's, give no padding mask, so in eager no mask is built: the
    program's aten::scaled_dot_product_attention gets attn_mask=None (is_causal=True for a
    causal model) and runs a flash or cuDNN kernel, as Python eager does. Under torch.jit.trace
    masking_utils' is_tracing() is true and it builds a full mask instead (the trace cannot be
    told the inputs will never change; ours never do): transformers 5.17 for every model, 5.23
    for the causal ones (its packed-sequence check on the position ids asks is_tracing too). An
    SDPA given a mask may run its math kernel, which computes bfloat16 attention in float32: the
    imported hf_Bert's eval ran 371 kernels per step to its hand-written port's 155 on an H200
    (H200 x4, 2026-11-28, transformers 5.17) and took 1.9x its time. Here is_tracing() answers False,
    so the mask checks (padding_mask.all(), the packed-sequence test) run on the example
    values and their outcome is baked into the program, which only ever runs on those inputs.
    A graph backend's program is traced without this (--traced-for=compiler): the graph
    torch.compile takes of the model holds those masks, and PyTorch's harness compiles that."""
    try:
        from transformers import masking_utils
    except ImportError:  # the timm suite's helper needs no transformers
        yield
        return
    traced_anywhere = getattr(masking_utils, "is_tracing", None)
    if traced_anywhere is None:  # a transformers whose masks do not ask
        yield
        return
    masking_utils.is_tracing = lambda tensor=None: False
    try:
        yield
    finally:
        masking_utils.is_tracing = traced_anywhere


def first_tensors(output):
    """The traced outputs as a flat tuple of tensors."""
    import torch

    leaves = []

    def visit(value):
        if isinstance(value, torch.Tensor):
            leaves.append(value)
        elif isinstance(value, (tuple, list)):
            for element in value:
                visit(element)
        elif isinstance(value, dict):
            for element in value.values():
                visit(element)

    visit(output)
    return tuple(leaves)


def traced_sizes_as_constants(traced):
    """Every aten::size in the traced forward becomes the size it had when traced, and the
    arithmetic on it is folded. The tracer records shape arithmetic (timm's "same" padding, window
    partitions, sinusoidal position tables: size -> NumToTensor -> mul -> aten::Int) as tensor ops;
    the inductor backend's TS2EPConverter turns each aten::Int of such a tensor into .item(), an
    unbacked size that export cannot reason about ("Could not guard on data-dependent expression
    u2 + u3 + 224 < 3": tf_efficientnet_b0, dm_nfnet_f0, mobilevit_s, swin, TrOCR, XGLM). The
    program only ever runs on the inputs it was traced with, so their sizes are its constants.
    Only here, straight after tracing, are the graph's tensor types complete (a saved and loaded
    program's are not; a parameter's or buffer's size is the module attribute's). Submodule calls
    are inlined first: their sizes live in their graphs."""
    import torch

    graph = traced.graph
    torch._C._jit_pass_inline(graph)
    module_input = next(graph.inputs()).unique()

    def attribute(value):
        """The module or tensor a chain of prim::GetAttr from the module input names, else None."""
        if value.unique() == module_input:
            return traced
        node = value.node()
        if node.kind() != "prim::GetAttr":
            return None
        owner = attribute(node.inputsAt(0))
        return None if owner is None else getattr(owner, node.s("name"), None)

    def traced_sizes(value):
        if isinstance(value.type(), torch._C.TensorType) and value.type().sizes() is not None:
            return value.type().sizes()
        tensor = attribute(value)
        return list(tensor.shape) if isinstance(tensor, torch.Tensor) else None

    for node in list(graph.findAllNodes("aten::size")):
        sizes = traced_sizes(node.inputsAt(0))
        if sizes is None or any(size is None for size in sizes):
            continue
        if node.inputsSize() == 1:
            value = list(sizes)
        else:
            dim = node.inputsAt(1).toIValue()
            if not isinstance(dim, int):
                continue
            value = sizes[dim]
        with graph.insert_point_guard(node):
            constant = graph.insertConstant(value)
        node.output().replaceAllUsesWith(constant)
        node.destroy()
    torch._C._jit_pass_constant_propagation(graph)
    torch._C._jit_pass_dce(graph)


# Integer arithmetic the tracer records on a size as tensor ops (ATen schema: self, other[, alpha]).
SHAPE_ARITHMETIC = {
    "aten::add": lambda a, b, alpha=1: a + alpha * b,
    "aten::sub": lambda a, b, alpha=1: a - alpha * b,
    "aten::mul": lambda a, b: a * b,
    "aten::floor_divide": lambda a, b: a // b,
}


def _integer_constant(value):
    """The int a graph value is a constant of (an int, or a zero-dimensional integral tensor
    constant on any device), else None."""
    node = value.node()
    if node.kind() != "prim::Constant" or not node.hasAttribute("value"):
        return None
    if node.kindOf("value") == "i":
        return node.i("value")
    if node.kindOf("value") == "t":
        tensor = node.t("value")
        if tensor.dim() == 0 and not tensor.is_floating_point() and not tensor.is_complex():
            return int(tensor.item())
    return None


def shape_arithmetic_folded(traced):
    """Arithmetic on a traced size that traced_sizes_as_constants left as a tensor op, because the
    op writes its input in place (`shape = list(x.shape); shape[2] += 2`, TorchBench's
    pyhpc_turbulent_kinetic_energy: add_(NumToTensor(26), <constant 2>), which constant
    propagation does not fold), becomes the int it computes. With the op gone, nothing is left to
    meet a CPU size with a constant of the traced device ("Expected all tensors to be on the same
    device, but found at least two devices, cuda:0 and cpu!": its ERROR records on the H100,
    2026-12-07, the eager column before 5d548d5 and the inductor column after it). Folded where
    the size is a constant, every other operand an integer constant and the op the size's only
    user; the result is a NumToTensor of the folded int, whose aten::Int constant propagation
    then folds. Returns the kinds of the ops folded."""
    import torch

    graph = traced.graph
    folded = []
    changed = True
    while changed:
        changed = False
        for size_tensor in graph.findAllNodes("prim::NumToTensor"):
            size = size_tensor.inputsAt(0).toIValue()
            uses = size_tensor.output().uses()
            if not isinstance(size, int) or len(uses) != 1 or uses[0].offset != 0:
                continue
            op = uses[0].user
            arithmetic = SHAPE_ARITHMETIC.get(op.kind().rstrip("_"))
            operands = [_integer_constant(value) for value in list(op.inputs())[1:]]
            if arithmetic is None or op.outputsSize() != 1 or None in operands:
                continue
            try:
                result = arithmetic(size, *operands)
            except (TypeError, ZeroDivisionError):  # another overload (e.g. rounding_mode)
                continue
            with graph.insert_point_guard(op):
                replacement = graph.insertNode(
                    graph.create("prim::NumToTensor", [graph.insertConstant(result)]))
            replacement.output().setType(op.output().type())
            op.output().replaceAllUsesWith(replacement.output())
            folded.append(op.kind())
            op.destroy()
            size_tensor.destroy()
            changed = True
            break  # the node list changed: find the NumToTensors again
    if folded:
        torch._C._jit_pass_constant_propagation(graph)
        torch._C._jit_pass_dce(graph)
    return folded


def shape_arithmetic_on_cpu(traced):
    """Every tensor constant of the traced forward's shape arithmetic becomes a CPU tensor. The
    tracer records arithmetic on a size (`shape = list(x.shape); shape[2] += 2`, TorchBench's
    pyhpc_turbulent_kinetic_energy) as an op on prim::NumToTensor's CPU scalar whose other operand
    is a constant of the traced device: on CUDA `add_(NumToTensor(26), <CUDA 2>)`, which the
    interpreter refuses ("Expected all tensors to be on the same device, but found at least two
    devices, cuda:0 and cpu!", an ERROR record on the H100, 2026-12-07). A value is shape arithmetic
    when it is a NumToTensor or an op's result whose first operand is one; each zero-dimensional
    constant such an op takes is given a CPU copy of its own (other users keep the original).
    Returns the kinds of the ops whose constants are shape arithmetic, moved or already on the CPU
    (as a CPU trace's are)."""
    import torch

    graph = traced.graph
    shape_values = set()
    found = []

    def visit(block):
        for node in block.nodes():
            for nested in node.blocks():
                visit(nested)
            inputs = list(node.inputs())
            if node.kind() == "prim::NumToTensor":
                shape_values.add(node.output().unique())
                continue
            if not inputs or inputs[0].unique() not in shape_values:
                continue
            for index, value in enumerate(inputs):
                producer = value.node()
                if producer.kind() != "prim::Constant" or not producer.hasAttribute("value") \
                        or producer.kindOf("value") != "t":
                    continue
                constant = producer.t("value")
                if constant.dim() != 0:
                    continue
                found.append(node.kind())
                if constant.device.type != "cpu":
                    with graph.insert_point_guard(node):
                        node.replaceInput(index, graph.insertConstant(constant.cpu()))
            for output in node.outputs():
                if isinstance(output.type(), torch._C.TensorType):
                    shape_values.add(output.unique())

    visit(graph)
    return found


# The ops whose float scalar is converted to the masked tensor's dtype: a fill value outside float16's
# range raises there ("value cannot be converted to type c10::Half without overflow").
FILL_OPS = ("aten::masked_fill", "aten::masked_fill_", "aten::where", "aten::fill_")


def float16_fill_values(traced):
    """Every fill of a float32 program with a value beyond float16's range becomes float16's
    extreme of the same sign (+-65504): transformers' attention masks (`masked_fill(mask,
    torch.finfo(dtype).min)`, dtype read while tracing) and masks written as a large constant
    (TorchBench's BERT_pytorch: -1e9, or -65504 when it sees float16 scores). The C++ child runs
    the float32 train program under CUDA's float16 autocast, where the masked scores are float16
    and such a value overflows them ("value cannot be converted to type c10::Half without
    overflow": DebertaV2's train configs and BERT_pytorch's on the H100); PyTorch's harness, which
    traces nothing, runs the model's code under autocast, which fills with a float16 value itself.
    In float32 the masked positions still vanish in the softmax that follows (exp(-65504 - max)
    is 0 in float32). Only scalars of the fill ops: a clamp's bound of the same value keeps it.
    Returns how many were replaced."""
    import torch

    highest16 = torch.finfo(torch.float16).max
    graph, replaced = traced.graph, 0
    for node in list(graph.findAllNodes("prim::Constant")):
        value = node.output()
        if value.type().kind() != "FloatType":
            continue
        number = value.toIValue()
        if not math.isfinite(number) or abs(number) <= highest16:  # -inf fits: float16 has it
            continue
        fills = [use for use in value.uses() if use.user.kind() in FILL_OPS]
        if not fills:
            continue
        with graph.insert_point_guard(node):  # where the old constant is: before all its uses
            fill16 = graph.insertConstant(math.copysign(highest16, number))
        for use in fills:
            use.user.replaceInput(use.offset, fill16)
        replaced += len(fills)
    return replaced


def check_disk_space(traced, inputs, directory):
    """Raises NotEnoughDisk when `directory`'s file system has less free space than the program
    and its inputs will take: the traced module's parameters and buffers, the tensor constants
    its graph holds (transformers' masks, position tables) and the inputs, plus 1% and 16 MiB for
    the archive's code and records (a BlenderbotForCausalLM float64 program is 18 GB)."""
    import torch

    tensors = list(traced.state_dict().values()) + list(inputs)
    tensors += [node.output().toIValue() for node in traced.graph.findAllNodes("prim::Constant")
                if isinstance(node.output().type(), torch._C.TensorType)]
    need = sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))
    need = int(need * 1.01) + (16 << 20)
    free = shutil.disk_usage(directory).free
    if free < need:
        raise NotEnoughDisk(f"the program needs about {need / 1e9:.2f} GB, {free / 1e9:.2f} GB "
                            f"are free on the file system of {directory} (the import cache: "
                            f"free space there, or --cache-dir elsewhere)")


def flat_outputs(inner, keep=None):
    """A module whose outputs are inner's as a flat tuple of tensors, the C++ side's convention
    (the first `keep` of them; None: all)."""
    import torch

    class FlatOutputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, *tensors):
            return first_tensors(self.inner(*tensors))[:keep]

    return FlatOutputs()


def build_from_checkout(args):
    """build's result for a model of the user's TorchBench checkout (torchbench_checkout.py): its
    get_module() inputs as positional tensors, the loss PyTorch's harness takes of any output
    (reduce_to_scalar_loss); the batch size the model chose goes to args.batch_size."""
    module, example_inputs, batch_size, class_name = build_torchbench(
        args.model, args.batch_size, args.device, args.test, args.torchbench_dir,
        args.random_weights, Unbuildable)
    if batch_size is not None:
        args.batch_size = batch_size
    wrapper, inputs, names = tensor_inputs(module, example_inputs)
    return wrapper, inputs, names, "reduce_to_scalar_loss", class_name


def built_model(args, overrides):
    """The suite's model and example inputs in --dtype on --device, in the test's mode, wrapped by
    flat_outputs; with the names of its inputs, its loss rule and its class name."""
    import torch

    dtype = getattr(torch, args.dtype)
    if args.suite == "torchbench":
        module, inputs, names, loss_rule, class_name = build_from_checkout(args)
    else:
        build = build_huggingface if args.suite == "huggingface" else build_timm
        module, inputs, names, loss_rule, class_name = build(args.model, args.batch_size,
                                                             args.device, overrides)
    module = module.to(dtype)
    inputs = tuple(t.to(dtype) if t.is_floating_point() else t for t in inputs)
    # train with the loss first (transformers): only the loss, so that the C++ train step's
    # reduce_to_scalar_loss of the output is the loss itself, as PyTorch's compute_loss = pred[0]
    keep = 1 if args.test == "train" and loss_rule == "first_output" else None
    flat = flat_outputs(module, keep).train(args.test == "train")
    return flat, inputs, names, loss_rule, class_name


def build_entry(args, overrides, versions, directory):
    import torch

    flat, inputs, names, loss_rule, class_name = built_model(args, overrides)
    # The tensors of the state only: a quantization-aware model's state dict also holds dtypes and
    # other plain values (TorchBench's resnet50_quantized_qat), which no forward changes.
    state = {k: v.clone() for k, v in flat.state_dict().items() if isinstance(v, torch.Tensor)}
    masks = eager_mask_decisions() if args.traced_for == "eager" else contextlib.nullcontext()
    # PyTorch's torchbench.py pick_grad: maml's eval takes gradients inside its forward
    # (torch.autograd.grad), so it runs with grad enabled; the tracer then says why it cannot
    # record that (an Untraceable SKIP) instead of the forward failing under no_grad
    grad_mode = torch.enable_grad if args.model in EVAL_WITH_GRAD else torch.no_grad
    with grad_mode():
        # One forward before tracing, as the C++ TorchScript backend settles its models: work a
        # model does on its first call only would otherwise be traced in and repeated on every call
        # of the program (TorchBench's llama converts its float32 KV caches to the input's dtype on
        # the first call, 134 MB per layer: its program ran 25x slower than the C++ port on the
        # CPU, 2026-12-06, BENCHMARKS.md). The BatchNorm statistics it moves are restored below.
        flat(*inputs)
    try:
        with grad_mode(), masks:
            traced = torch.jit.trace(flat, inputs, check_trace=False, strict=False)
    except Exception as e:  # the tracer's errors have no common type (TypeError, RuntimeError...)
        raise untraceable(args.model, e) from e
    # tracing ran one forward: undo BatchNorm's running-stat update in place (load_state_dict of
    # the copies would lose the state dict's per-module versions: torchvision's MNASNet refuses it).
    # A buffer whose shape the forwards changed keeps what they made: a per-channel observer of a
    # quantization-aware model starts empty and takes its channels' shape on its first call
    # (TorchBench's *_quantized_qat train: "size of tensor a (32) must match ... b (0)"), and the
    # traced program holds the branch that updates the filled one.
    with torch.no_grad():
        for key, tensor in flat.state_dict().items():
            if key in state and tensor.shape == state[key].shape:
                tensor.copy_(state[key])
    if args.exported_program:
        check_disk_space(traced, inputs, directory)  # the package holds the same weights
        write_exported_program_or_why(flat, inputs, directory)
    traced_sizes_as_constants(traced)
    shape_arithmetic_folded(traced)
    shape_arithmetic_on_cpu(traced)
    if args.dtype == "float32":  # the program CUDA's train step runs under float16 autocast
        float16_fill_values(traced)
    check_disk_space(traced, inputs, directory)
    traced.save(os.path.join(directory, "model.pt"))
    torch.save(tuple(t.cpu() for t in inputs), os.path.join(directory, "inputs.pt"))
    manifest = {"suite": args.suite, "model": args.model, "class": class_name,
                "versions": versions, "batch_size": args.batch_size, "dtype": args.dtype,
                "device": args.device, "test": args.test, "overrides": overrides,
                "input_names": names, "input_shapes": [list(t.shape) for t in inputs],
                "loss": loss_rule,
                "traced_for": (args.traced_for if args.suite in ("huggingface", "torchbench")
                               else "either"),
                "parameters": sum(p.numel() for p in flat.parameters()),
                "runtime": "TorchScript (torch.jit.trace), run by LibTorch's interpreter"}
    if args.suite == "torchbench":
        manifest.update(checkout=os.path.abspath(args.torchbench_dir),
                        revision=checkout_revision(args.torchbench_dir) or "not a git checkout",
                        weights="random (--random-weights)" if args.random_weights
                        else "as the model loads them",
                        precision=f"{args.dtype} (TorchBench built with --precision fp32, then "
                                  f"cast)")
    with open(os.path.join(directory, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def add_exported_program(args, overrides, entry):
    """An entry built without --exported-program gets its exported.pt2 (the model built again)."""
    flat, inputs, _, _, _ = built_model(args, overrides)
    write_exported_program_or_why(flat, inputs, entry)


def build_user_entry(args, versions, directory):
    """--suite=exported: the user's .pt2 for this device and dtype (exported_package.py)."""
    import torch

    shapes, parameters = convert_user_package(args.program, args.inputs, args.device,
                                              getattr(torch, args.dtype), directory)
    manifest = {"suite": args.suite, "model": args.model, "program": os.path.abspath(args.program),
                "inputs": os.path.abspath(args.inputs) if args.inputs else "stored in the package",
                "versions": versions, "dtype": args.dtype, "device": args.device, "test": "eval",
                "input_shapes": shapes, "parameters": parameters,
                "runtime": "torch.export package, run by torch::nativert"}
    with open(os.path.join(directory, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def main(argv):
    args = parse_arguments(argv)
    versions = package_versions(args.suite)
    if args.expect_torch_version and not versions["torch"].startswith(args.expect_torch_version):
        print(f"benchmatrix_import: the helper's torch is {versions['torch']}, the child's "
              f"LibTorch {args.expect_torch_version}", file=sys.stderr)
        return 4
    overrides = model_overrides(args.overrides, args.model)
    entry = os.path.join(args.cache_dir, cache_key(args, versions, overrides))
    if not os.path.exists(os.path.join(entry, "manifest.json")):
        os.makedirs(args.cache_dir, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".staging-", dir=args.cache_dir)
        try:
            if args.suite == "exported":
                build_user_entry(args, versions, staging)
            else:
                build_entry(args, overrides, versions, staging)
            try:
                os.rename(staging, entry)  # atomic; a concurrent builder's entry wins
            except OSError:
                if not os.path.exists(os.path.join(entry, "manifest.json")):
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    elif args.exported_program and not any(os.path.exists(os.path.join(entry, name))
                                           for name in (PACKAGE_NAME, FAILURE_NAME)):
        add_exported_program(args, overrides, entry)
    with open(args.result, "w") as f:
        f.write(entry)
    return 0


def run(argv):
    """main's exit status and, for a failure this helper explains (Unbuildable, Untraceable,
    NotEnoughDisk), the line that says why ("" otherwise): what `python -m benchmatrix_import`
    prints and exits with, for callers that build several programs in one process
    (bench/any_model_coverage.py)."""
    try:
        return main(argv), ""
    except Unbuildable as e:
        return UNBUILDABLE, f"benchmatrix_import: cannot be built here: {e}"
    except NotImplementedForTest as e:
        return NOT_IMPLEMENTED_FOR_TEST, f"benchmatrix_import: {e}"
    except Untraceable as e:
        return UNBUILDABLE, f"benchmatrix_import: {e}"
    except NotEnoughDisk as e:
        return 1, f"benchmatrix_import: not enough disk space: {e}"
    except UnusablePackage as e:
        return 1, f"benchmatrix_import: {e}"


if __name__ == "__main__":
    status, why = run(sys.argv[1:])
    if why:
        print(why, file=sys.stderr)
    sys.exit(status)
