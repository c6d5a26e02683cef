"""--suite=torchbench: one model of the user's TorchBench checkout (pytorch/benchmark), built as
PyTorch's benchmarks/dynamo/torchbench.py builds it:

  - the checkout (the folder holding torchbenchmark/) on sys.path and the working directory (models
    read and write files under it), KALDI_ROOT=/tmp as PyTorch sets it;
  - torchbenchmark.models.<name>.Model(test=..., device=..., batch_size=..., extra_args=[
    "--precision", "fp32"]): the batch size None unless the run chose one (the model's default,
    device rules included), fp32 whatever TorchBench's default precision for the family is
    (fp16 for torchvision, timm and HuggingFace models on CUDA eval): the run's --dtype is applied
    afterwards, as PyTorch's harness re-casts with --float32/--bfloat16;
  - model, example_inputs = get_module(); train() for test=train, else eval(), for every model
    as PyTorch's harness (its torchbench.yaml's only_training keeps train mode only in its
    training accuracy runs, which otherwise train in eval mode); the actual batch size is
    benchmark.batch_size.

Offline rules (nothing is downloaded behind the user's back where it can be helped):
  - HF_HUB_OFFLINE=1 unless the caller set it: HuggingFace configs come from the user's HF cache
    (HF_HOME); a missing one is an Unbuildable naming the hub id;
  - --random-weights: torchvision builders get weights=None and timm.create_model pretrained=False
    (random initialisation: timing does not depend on the values, and --verify compares backends
    on the same weights); without it a weight download that fails is an Unbuildable naming the
    URL, the file it would be saved as and the flag;
  - a missing Python package (ModuleNotFoundError) or data file (FileNotFoundError) is an
    Unbuildable naming it; a model that does not implement the test (NotImplementedError, e.g.
    an eval-only model asked to train) is a NotImplementedForTest.
"""

import contextlib
import functools
import hashlib
import importlib
import importlib.metadata
import os
import re
import subprocess
import sys

class NotImplementedForTest(Exception):
    """The model does not implement this test (TorchBench raises NotImplementedError)."""


@functools.lru_cache(maxsize=None)  # the cache key and the manifest both ask: git runs once
def checkout_revision(checkout):
    """The checkout's git revision, "+dirty" when its torchbenchmark/ has local changes; None when
    it is not a git work tree (an unpacked archive)."""
    try:
        top = subprocess.run(["git", "-C", checkout, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=30)
        # a copy inside another repository's work tree is not that repository's revision
        if top.returncode != 0 or os.path.realpath(top.stdout.strip()) != os.path.realpath(checkout):
            return None
        revision = subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True,
                                  text=True, timeout=30)
        if revision.returncode != 0:
            return None
        status = subprocess.run(["git", "-C", checkout, "status", "--porcelain", "--",
                                 "torchbenchmark"], capture_output=True, text=True, timeout=60)
        dirty = status.returncode == 0 and status.stdout.strip() != ""
        return revision.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return None


def model_sources_digest(checkout, model):
    """SHA-256 of the model folder's Python files: an entry is rebuilt when the model's code
    changes, committed or not."""
    digest = hashlib.sha256()
    folder = os.path.join(checkout, "torchbenchmark", "models", model)
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                digest.update(os.path.relpath(path, folder).encode())
                with open(path, "rb") as f:
                    digest.update(f.read())
    return digest.hexdigest()


@contextlib.contextmanager
def random_weights():
    """torchvision's builders with weights=None and timm.create_model with pretrained=False while
    the model is built (TorchBench's factories ask for ImageNet weights)."""
    undo = []
    try:
        import torchvision.models as vision_models

        for name in vision_models.list_models():
            builder = getattr(vision_models, name, None)
            if builder is None:
                continue

            def without_weights(*args, _builder=builder, **kwargs):
                kwargs.pop("pretrained", None)
                kwargs["weights"] = None
                return _builder(*args, **kwargs)

            setattr(vision_models, name, without_weights)
            undo.append((vision_models, name, builder))
    except ImportError:
        pass
    try:
        import timm

        create_model = timm.create_model

        def without_pretrained(*args, **kwargs):
            kwargs["pretrained"] = False
            return create_model(*args, **kwargs)

        timm.create_model = without_pretrained
        undo.append((timm, "create_model", create_model))
    except ImportError:
        pass
    try:
        yield
    finally:
        for owner, name, original in undo:
            setattr(owner, name, original)


@contextlib.contextmanager
def downloads_named(unbuildable):
    """A weight download that fails raises `unbuildable` naming the URL and the file."""
    import torch.hub

    download = torch.hub.download_url_to_file

    def named_download(url, dst, *args, **kwargs):
        try:
            return download(url, dst, *args, **kwargs)
        except Exception as e:  # URLError, HTTPError, socket errors: all mean "not here"
            raise unbuildable(
                f"needs pretrained weights from {url} ({type(e).__name__}: {e}); put the file at "
                f"{dst}, or pass --random-weights to run with randomly initialised weights") from e

    torch.hub.download_url_to_file = named_download
    try:
        yield
    finally:
        torch.hub.download_url_to_file = download


def hub_reason(error):
    """The Unbuildable text for a HuggingFace hub file missing from the cache, or None."""
    text = str(error)
    if "huggingface" not in text.lower() and "hf_hub" not in text.lower():
        return None
    hub_id = hub_id_asked(error) or "its hub config (the model's __init__.py names the hub id)"
    home = os.environ.get("HF_HOME", os.path.expanduser("~/.cache/huggingface"))
    return (f"needs {hub_id} from the HuggingFace hub, which is not in the HF cache ({home}, "
            f"HF_HUB_OFFLINE=1): on a machine with network run `hf download {hub_id} "
            f"config.json` (HF_HOME pointing at that cache) and copy the cache here")


# The arguments naming the repository in transformers' and huggingface_hub's loaders
# (cached_files(path_or_repo_id), from_pretrained(pretrained_model_name_or_path), hf_hub_download(
# repo_id)): transformers 5's offline error names only the hub's URL, not what was asked of it.
HUB_ID_ARGUMENTS = ("path_or_repo_id", "pretrained_model_name_or_path", "repo_id")


def hub_id_asked(error):
    """The hub id whose files `error` failed to find: the innermost loader frame's argument, else
    a quoted id in the message (older versions: "Can't load the configuration of 'gpt2'"), or
    None."""
    frames = []
    traceback = error.__traceback__
    while traceback is not None:
        frames.append(traceback.tb_frame)
        traceback = traceback.tb_next
    for frame in reversed(frames):
        for argument in HUB_ID_ARGUMENTS:
            value = frame.f_locals.get(argument)
            if isinstance(value, (str, os.PathLike)) and str(value):
                return str(value)
    for quoted in re.findall(r"'([^'\s]+)'", str(error)):
        if "://" not in quoted:
            return quoted
    return None


def package_version_reason(model, error):
    """The Unbuildable text for a model written against another version of a package that is
    installed, or None: `from package import name` of a name the installed version lacks
    (ImportError naming the package), or a lookup of a submodule it no longer has (TorchBench's
    basic_gnn_* read sys.modules["torch_geometric.compile"], which torch_geometric 2.5 removed:
    KeyError, the module's dotted name)."""
    if isinstance(error, ModuleNotFoundError):
        return None
    if isinstance(error, ImportError) and error.name:
        module, needs = error.name, str(error).split(" (")[0]  # "cannot import name 'x' from 'y'"
    elif (isinstance(error, KeyError) and len(error.args) == 1 and isinstance(error.args[0], str)
          and "." in error.args[0] and error.args[0].split(".")[0] in sys.modules
          and error.args[0] not in sys.modules):
        module = error.args[0]
        needs = f"the module {module}, which is not there"
    else:
        return None
    top = module.split(".")[0]
    distributions = importlib.metadata.packages_distributions().get(top, [top])
    try:
        version = importlib.metadata.version(distributions[0])
    except importlib.metadata.PackageNotFoundError:
        return None
    return (f"{model} was written for another version of {distributions[0]} than the installed "
            f"{version}: {needs} (the model's requirements.txt or install.py in TorchBench names "
            f"the version it needs)")


def import_model_class(model):
    """torchbenchmark.models.<model>.Model (canary_models as PyTorch's harness falls back to)."""
    last = None
    for package in ("torchbenchmark.models", "torchbenchmark.canary_models"):
        try:
            module = importlib.import_module(f"{package}.{model}")
        except ModuleNotFoundError as e:
            if e.name and (e.name == package + "." + model or e.name == package):
                last = e
                continue
            raise
        model_class = module.Model
        if not hasattr(model_class, "name"):
            model_class.name = model
        return model_class
    raise last


def build_torchbench(model, batch_size, device, test, checkout, use_random_weights, unbuildable):
    """(module, example inputs as given by get_module, batch size, class name) of one checkout
    model; raises `unbuildable` or NotImplementedForTest for what cannot be built here."""
    import torch

    checkout = os.path.abspath(checkout)
    if checkout not in sys.path:
        sys.path.insert(0, checkout)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("KALDI_ROOT", "/tmp")
    previous_directory = os.getcwd()
    os.chdir(checkout)
    weights = random_weights() if use_random_weights else contextlib.nullcontext()
    try:
        with weights, downloads_named(unbuildable):
            try:
                model_class = import_model_class(model)
                torch.manual_seed(1337)
                benchmark = model_class(test=test, device=device, batch_size=batch_size,
                                        extra_args=["--precision", "fp32"])
                module, example_inputs = benchmark.get_module()
            except ModuleNotFoundError as e:
                raise unbuildable(f"{model} needs the Python package '{e.name}', which is not "
                                  f"installed (TorchBench's requirements.txt, or the model's "
                                  f"requirements.txt or install.py in "
                                  f"{checkout}/torchbenchmark/models/{model}, names it)") from e
            except FileNotFoundError as e:
                raise unbuildable(f"{model} needs the file {e.filename}, which is not there "
                                  f"(TorchBench's install.py downloads its data)") from e
            except NotImplementedError as e:
                raise NotImplementedForTest(f"{model} does not implement test={test} in "
                                            f"TorchBench ({e or 'NotImplementedError'})") from e
            except OSError as e:
                reason = hub_reason(e)
                if reason:
                    raise unbuildable(f"{model} {reason}") from e
                raise
            except (ImportError, KeyError) as e:
                reason = package_version_reason(model, e)
                if reason:
                    raise unbuildable(reason) from e
                raise
            except AssertionError as e:
                # yolov3 asserts its data set (coco128) is there when its module is imported,
                # and asks for install.py by name
                if "install.py" not in str(e):
                    raise
                raise unbuildable(f"{model} needs its data set, which TorchBench's install.py "
                                  f"downloads into {checkout}/torchbenchmark/data/.data/ (run "
                                  f"`python install.py {model}` in the checkout where the network "
                                  f"is reachable): {e}") from e
            except RuntimeError as e:
                # Super_SloMo, tacotron2, Background_Matting: their data set is not where
                # install.py puts it, and the models' fallback is Meta's internal storage
                if not str(e).startswith("Failed to download data from manifold"):
                    raise
                raise unbuildable(f"{model} needs its data set, which TorchBench's install.py "
                                  f"downloads into {checkout}/torchbenchmark/data/.data/ (run "
                                  f"`python install.py {model}` in the checkout where the network "
                                  f"is reachable); its fallback, Meta's internal storage, failed: "
                                  f"{e.__cause__ or e}") from e
    finally:
        os.chdir(previous_directory)
    module.train(test == "train")  # the caller's mode rule (__main__.built_model) decides last
    actual_batch = getattr(benchmark, "batch_size", None)
    return module, example_inputs, actual_batch, f"{type(benchmark).__module__}.Model"


def tensor_inputs(inner, example_inputs):
    """A module whose forward(*tensors) calls `inner` as get_module's inputs call it (a dict as
    keyword arguments, PyTorch's mod(**inputs); a tuple or list positionally), with the tensors
    in flattened order and every other leaf (ints, flags) fixed as given; and those tensors and
    their names."""
    import torch
    from torch.utils._pytree import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten

    leaves, spec = tree_flatten(example_inputs)
    tensor_slots = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
    keyword = isinstance(example_inputs, dict)
    paths = [keystr(path) for path, _ in tree_flatten_with_path(example_inputs)[0]]
    # "['input_ids']" -> "input_ids", "[0]" -> "input_0", "[1][0]" -> "input_1_0"
    names = [re.sub(r"\W+", "_", path).strip("_") for path in (paths[i] for i in tensor_slots)]
    names = [name if keyword else f"input_{name}" for name in names]

    class TensorInputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, *tensors):
            values = list(leaves)
            for slot, tensor in zip(tensor_slots, tensors):
                values[slot] = tensor
            arguments = tree_unflatten(values, spec)
            if keyword:
                return self.inner(**arguments)
            if isinstance(arguments, (tuple, list)):
                return self.inner(*arguments)
            return self.inner(arguments)

    return TensorInputs(), tuple(leaves[i] for i in tensor_slots), names
