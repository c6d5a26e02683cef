"""Peak-memory anchor (issue 26): our eager peak device memory against Python's
torch.cuda.max_memory_allocated() for the pip originals, at the same batch sizes.

For each model and test: experiment_runner --dynamo=None (eager) on CUDA with the memory pass (on by
default) gives metrics.peak_device_allocated_bytes per repeat (median past repeat 0) and the
record's memory key (parameters, buffers, optimizer state, resident bytes). Then, in a fresh Python
process per (model, test) so that nothing of an earlier model is still allocated, the pip original
at the batch size our record used: one warm-up step (Adam's state is created there, as our timed
repeats have created it before our pass), torch.cuda.reset_peak_memory_stats(), --steps steps,
torch.cuda.max_memory_allocated() — the same allocator counter our pass reads.

The steps are the original runner's: eval = forward under no_grad with the model and its float
inputs cast to bfloat16 (experiment_runner's CUDA inference precision, suites/precision_rule: the
torchbench YAML's force_fp16/force_amp lists are empty, so every model); train = zero_grad
(to None), forward and reduce_to_scalar_loss under float16 autocast (our CUDA train default, no
GradScaler), backward, Adam or SGD (TRAIN_WITH_SGD) with lr 0.01 (foreach on CUDA).
Originals: torchvision (resnet*, mobilenet_*, densenet121, vgg16, alexnet, squeezenet1_1,
shufflenet_v2_x1_0); transformers GPT2LMHeadModel(GPT2Config()) and
BertForMaskedLM(BertConfig()) with TorchBench's sequence lengths (GPT2 1024 eval / 512 train, BERT
512); timm vit_small_patch16_224 and efficientnet_b0 (random init: the weights' values do not change memory). A package
that is not installed gives a note instead of a figure.

Expected: the same order of magnitude, usually within ~10%. Where they differ: our models hold the
same parameters and buffers (the record's memory.parameters_bytes should match Python's
sum(p.numel() * p.element_size())); kernels choose different workspaces (cuDNN/cuBLAS algorithm
selection, SDPA backend), HF allocates an attention mask / position ids per call, and autocast's
weight-cast cache differs (ours casts the same weights).
One JSON line per (model, test) on stdout, then a table.
Usage: python3 bench/peak_memory_anchor.py RUNNER OUT_DIR [--models a,b] [--tests eval,train]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

# bench/anchor_steps.py, beside this script
from anchor_steps import TIMM, TORCHVISION, TRAIN_WITH_SGD, reduce_to_scalar_loss

MIB = 1024 * 1024


def python_model(name, batch, test):
    """The pip original of `name` and its inputs, on the CPU."""
    import torch
    if name in TORCHVISION:
        import torchvision
        return getattr(torchvision.models, TORCHVISION[name])(), (torch.randn(batch, 3, 224, 224),)
    if name == "hf_GPT2":
        from transformers import GPT2Config, GPT2LMHeadModel
        config = GPT2Config()
        config.use_cache = False
        length = 1024 if test == "eval" else 512
        return GPT2LMHeadModel(config), (torch.randint(0, config.vocab_size, (batch, length)),)
    if name == "hf_Bert":
        from transformers import BertConfig, BertForMaskedLM
        config = BertConfig()
        return BertForMaskedLM(config), (torch.randint(0, config.vocab_size, (batch, 512)),)
    if name in TIMM:
        import timm
        return timm.create_model(TIMM[name]), (torch.randn(batch, 3, 224, 224),)
    raise KeyError(f"no pip original known for {name}")


def measure_python(name, test, batch, steps):
    """In this (fresh) process: the pip original's peak allocated bytes over `steps` steps."""
    import torch
    torch.set_float32_matmul_precision("high")  # as experiment_runner without --disable-tf32
    model, inputs = python_model(name, batch, test)
    model = model.cuda().train(test == "train")
    inputs = tuple(x.cuda() for x in inputs)
    if test == "eval":  # our CUDA inference precision: a bfloat16 cast (not autocast)
        model = model.to(torch.bfloat16)
        inputs = tuple(x.to(torch.bfloat16) if x.is_floating_point() else x for x in inputs)
    parameters_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    if test == "eval":
        def step():
            with torch.no_grad():
                model(*inputs)
    else:
        params = list(model.parameters())
        optimizer = (torch.optim.SGD(params, lr=0.01) if name in TRAIN_WITH_SGD
                     else torch.optim.Adam(params, lr=0.01))

        def step():
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = reduce_to_scalar_loss(model(*inputs))
            loss.backward()
            optimizer.step()
    step()  # warm-up: cuDNN/cuBLAS handles and workspaces, Adam's state
    torch.cuda.synchronize()
    resident = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return {"peak_allocated_bytes": torch.cuda.max_memory_allocated(),
            "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
            "resident_bytes": resident, "parameters_bytes": parameters_bytes}


def run_ours(runner, model, test, out_dir, repeats):
    directory = os.path.join(out_dir, f"{model}-{test}")
    command = [runner, "--suite-name=torchbench", "--accelerator=cuda", "--xla=None",
               "--dynamo=None", f"--test={test}", f"--filter=^{model}$", f"--repeat={repeats}",
               f"--output-dirname={directory}", "--no-resume"]
    with open(directory + ".log", "w") as log:
        subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
    path = os.path.join(directory, "results.jsonl")
    if not os.path.exists(path):
        return None
    records = [json.loads(line) for line in open(path)]
    return records[-1] if records else None


def counted_median(values):
    return statistics.median(values[1:] if len(values) > 1 else values)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runner", nargs="?")
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--models", default="resnet50,hf_GPT2,hf_Bert,timm_vision_transformer")
    parser.add_argument("--tests", default="eval,train")
    parser.add_argument("--repeats", type=int, default=4, help="ours: repeats (repeat 0 left out)")
    parser.add_argument("--steps", type=int, default=3, help="Python: measured steps")
    parser.add_argument("--python-one", nargs=3, metavar=("MODEL", "TEST", "BATCH"),
                        help=argparse.SUPPRESS)  # the per-model child process
    args = parser.parse_args()
    if args.python_one:
        name, test, batch = args.python_one
        print(json.dumps(measure_python(name, test, int(batch), args.steps)))
        return 0
    if not args.runner or not args.out_dir:
        parser.error("RUNNER and OUT_DIR are required")
    os.makedirs(args.out_dir, exist_ok=True)
    rows = []
    for name in args.models.split(","):
        for test in args.tests.split(","):
            row = {"model": name, "test": test, "notes": []}
            record = run_ours(args.runner, name, test, args.out_dir, args.repeats)
            metrics = (record or {}).get("metrics", {})
            if "peak_device_allocated_bytes" not in metrics:
                row["notes"].append("ours: " + str(metrics.get("error", "no record"))[:300])
            else:
                row["batch_size"] = record["experiment"]["batch_size"]
                row["ours_peak_allocated_bytes"] = counted_median(
                    metrics["peak_device_allocated_bytes"])
                row["ours_peak_reserved_bytes"] = counted_median(
                    metrics["peak_device_reserved_bytes"])
                row["ours_memory"] = record.get("memory")
                child = subprocess.run(
                    [sys.executable, __file__, "--python-one", name, test,
                     str(row["batch_size"]), f"--steps={args.steps}"],
                    capture_output=True, text=True, check=False)
                if child.returncode == 0:
                    row["python"] = json.loads(child.stdout.strip().splitlines()[-1])
                else:
                    row["notes"].append("python: " + (child.stderr.strip().splitlines() or
                                                      ["failed"])[-1][:300])
            print(json.dumps(row), flush=True)
            rows.append(row)
    print(f"\n{'model':24} {'test':5} {'batch':>5} {'ours MiB':>10} {'python MiB':>10} "
          f"{'ours/py':>7} {'ours params MiB':>15} {'py params MiB':>13} {'ours resident':>13} "
          f"{'py resident':>11}")
    for row in rows:
        ours, python = row.get("ours_peak_allocated_bytes"), row.get("python", {})
        theirs = python.get("peak_allocated_bytes")
        memory = row.get("ours_memory") or {}
        resident = (memory.get("device") or {}).get("allocated_bytes_before_pass")

        def mib(value):
            return f"{value / MIB:.0f}" if value is not None else "-"
        ratio = f"{ours / theirs:.2f}" if ours and theirs else "-"
        print(f"{row['model']:24} {row['test']:5} {str(row.get('batch_size', '-')):>5} "
              f"{mib(ours):>10} {mib(theirs):>10} {ratio:>7} "
              f"{mib(memory.get('parameters_bytes')):>15} {mib(python.get('parameters_bytes')):>13} "
              f"{mib(resident):>13} {mib(python.get('resident_bytes')):>11}")
        for note in row["notes"]:
            print(f"{'':24}   note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
