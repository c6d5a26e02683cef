"""The Python anchor of inductor's compile time (issue 22): cold torch.compile of pip originals.

For each model, in a fresh Python process with empty Inductor and Triton caches (as our
--cold-start compile has): build the pip original (torchvision, transformers; nanogpt has none, so
its graph is the one our compile cache holds: traced.pt converted as the compile helper does),
feed it the example inputs our compile used (the cache entry's inputs.pt: same shapes, batch size),
and time torch.compile in default mode up to the end of its first call (compile + one run, as
Inductor compiles lazily), plus the torch import. One JSON line per model:
  {"model", "source", "import_s", "compile_s", "host", "device", "timestamp"} or {"model", "error"}.
Usage: python bench/compile_time_anchor.py CACHE_DIR --models resnet50,hf_GPT2,...
(CACHE_DIR: an experiment_runner --cache-dir that holds the models' cuda AOTInductor entries.)
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def entry_of(cache_dir, model, device="cuda"):
    """The newest `device` AOTInductor entry of `model` in the cache (its directory), or None."""
    found = []
    for key in os.listdir(cache_dir):
        manifest = os.path.join(cache_dir, key, "manifest.json")
        if not os.path.exists(manifest):
            continue
        with open(manifest) as f:
            description = json.load(f).get("description", "")
        if description.startswith(f"model {model};") and device in description \
                and "AOTInductor" in description:
            found.append((os.path.getmtime(manifest), os.path.join(cache_dir, key)))
    return max(found)[1] if found else None


def pip_original(model):
    """(module, how the example inputs are passed) of the pip original, or None when none."""
    if model in ("resnet50", "mobilenet_v3_large"):
        import torchvision

        return getattr(torchvision.models, model)(), "positional"
    if model == "hf_GPT2":
        from transformers import GPT2Config, GPT2LMHeadModel

        return GPT2LMHeadModel(GPT2Config()), "input_ids"
    if model == "hf_Bert":
        from transformers import BertConfig, BertForMaskedLM

        return BertForMaskedLM(BertConfig()), "input_ids"
    return None


def compile_one(model, directory, dtype):
    """Runs in the child process: one cold compile, timed. Returns the JSON line's fields."""
    started = time.perf_counter()
    import torch

    import_s = time.perf_counter() - started
    torch.set_float32_matmul_precision("high")  # as experiment_runner without --disable-tf32
    inputs = tuple(x.cuda() for x in torch.load(os.path.join(directory, "inputs.pt"),
                                                weights_only=True))
    original = pip_original(model)
    if original:
        module, passing = original
        # in experiment_runner's inference precision (README: bfloat16 on CUDA), as our graph is
        module = module.cuda().eval().to(getattr(torch, dtype))
        inputs = tuple(x.to(getattr(torch, dtype)) if x.is_floating_point() else x for x in inputs)
        source = "pip original"
    else:
        sys.path.insert(0, os.path.join(HERE, "..", "python"))
        from benchmatrix_compile.__main__ import static_shapes_in_ts2ep
        from torch._export.converter import TS2EPConverter

        traced = torch.jit.load(os.path.join(directory, "traced.pt"), map_location="cuda")
        with static_shapes_in_ts2ep():
            module = TS2EPConverter(traced, inputs).convert().module()
        passing, source = "positional", "our traced graph (no pip original)"
    compiled = torch.compile(module)
    torch.cuda.synchronize()
    started = time.perf_counter()
    with torch.no_grad():
        if passing == "input_ids":
            compiled(input_ids=inputs[0])
        else:
            compiled(*inputs)
    torch.cuda.synchronize()
    return {"model": model, "source": source, "import_s": import_s,
            "compile_s": time.perf_counter() - started,
            "host": socket.gethostname(), "device": torch.cuda.get_device_name()}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cache_dir")
    parser.add_argument("--models", required=True, help="comma-separated model names")
    parser.add_argument("--dtype", default="bfloat16",
                        help="the pip originals' dtype (experiment_runner's CUDA inference "
                             "precision)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)  # MODEL=DIRECTORY
    args = parser.parse_args()
    if args.child:
        model, directory = args.child.split("=", 1)
        print(json.dumps(compile_one(model, directory, args.dtype)))
        return 0
    for model in filter(None, args.models.split(",")):
        directory = entry_of(args.cache_dir, model)
        if not directory:
            print(json.dumps({"model": model, "error": f"no cuda AOTInductor entry in "
                                                       f"{args.cache_dir}"}), flush=True)
            continue
        with tempfile.TemporaryDirectory(prefix="anchor-caches-") as caches:
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(caches, "inductor"),
                       TRITON_CACHE_DIR=os.path.join(caches, "triton"))
            proc = subprocess.run([sys.executable, __file__, args.cache_dir, "--models", model,
                                   "--dtype", args.dtype, "--child", f"{model}={directory}"],
                                  capture_output=True, text=True, env=env)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
        if proc.returncode != 0 or not lines:
            print(json.dumps({"model": model, "error": proc.stderr[-2000:]}), flush=True)
        else:
            print(json.dumps({**json.loads(lines[-1]), "timestamp": time.time()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
