"""Train-step bench (issue 28): our eager and cudagraphs train step against Python's, interleaved.

For each model, in rounds: experiment_runner --test=train under eager and cudagraphs (one child
each, repeat 0 is warm-up), then Python eager and torch.compile(step, mode="reduce-overhead") of
the same step on the pip original, timed with CUDA events in this process (compiled once, before
the first round). The step is the original runner's: zero_grad (to None), forward and
reduce_to_scalar_loss under float16 autocast (our CUDA train default, no GradScaler), backward,
Adam or SGD (TRAIN_WITH_SGD) with lr 0.01 and torch.optim's defaults (foreach on CUDA). At the
end a --profile-cupti run of our cudagraphs train gives its GPU-busy time per iteration.

Pip originals: torchvision (resnet*, mobilenet_*, densenet121, vgg16, alexnet, squeezenet1_1,
shufflenet_v2_x1_0), transformers (hf_GPT2: GPT2LMHeadModel(GPT2Config()), hf_Bert:
BertForMaskedLM(BertConfig()); the step reduces their logits, as our port returns) and timm
(timm_vision_transformer: vit_small_patch16_224, timm_efficientnet: efficientnet_b0), all randomly
initialised at the batch our record ran. Other models get our figures only, with a note. At the
end, the geometric mean of our eager over Python eager over the models with both (issue 28's
target: at most 0.90). One JSON line per model and variant on stdout
({"model", "variant", "per_iter_ms": [...]}), then a table: medians with min-max over all counted
repeats, ratios to Python eager, and our cudagraphs wall time over its GPU-busy time.
Usage: python3 bench/train_step_anchor.py RUNNER OUT_DIR [--models a,b] [--rounds 2]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import torch

from anchor_steps import reduce_to_scalar_loss  # bench/anchor_steps.py, beside this script

# Of TRAIN_WITH_SGD (backends/eager_backend.cpp trains_with_sgd); the others train with Adam.
SGD_MODELS = {"resnet18", "mobilenet_v2", "timm_vision_transformer", "alexnet", "densenet121",
              "shufflenet_v2_x1_0", "squeezenet1_1", "vgg16"}
TORCHVISION = {name: name for name in (
    "resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "densenet121", "vgg16",
    "alexnet", "squeezenet1_1", "shufflenet_v2_x1_0")}
TIMM = {"timm_vision_transformer": "vit_small_patch16_224", "timm_efficientnet": "efficientnet_b0"}
TRANSFORMERS = {"hf_GPT2": ("GPT2LMHeadModel", "GPT2Config", 50257),
                "hf_Bert": ("BertForMaskedLM", "BertConfig", 30522)}
TRAIN_SEQUENCE_LENGTH = 512  # TorchBench's hf_GPT2 and hf_Bert train inputs: [batch, 512] ids


class Logits(torch.nn.Module):
    """A transformers model returning its logits only (our port's output; the step reduces them)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids).logits


def has_original(name):
    return name in TORCHVISION or name in TIMM or name in TRANSFORMERS


def python_model(name, batch):
    """The pip original of a model (torchvision, timm or transformers) and its inputs."""
    if name in TORCHVISION:
        import torchvision
        return getattr(torchvision.models, TORCHVISION[name])(), (torch.randn(batch, 3, 224, 224),)
    if name in TIMM:
        import timm
        return timm.create_model(TIMM[name], pretrained=False), (torch.randn(batch, 3, 224, 224),)
    import transformers
    model_class, config_class, vocabulary = TRANSFORMERS[name]
    config = getattr(transformers, config_class)()
    config.use_cache = False  # the step needs the logits only, as our port returns
    model = Logits(getattr(transformers, model_class)(config))
    return model, (torch.randint(0, vocabulary, (batch, TRAIN_SEQUENCE_LENGTH)),)


def make_step(model, name):
    params = list(model.parameters())
    optimizer = (torch.optim.SGD(params, lr=0.01) if name in SGD_MODELS
                 else torch.optim.Adam(params, lr=0.01))

    def step(*inputs):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = reduce_to_scalar_loss(model(*inputs))
        loss.backward()
        optimizer.step()
    return step


def time_per_iter(fn, args, iters, repeats):
    out = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn(*args)
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end) / iters)
    return out


def run_ours(runner, model, out_dir, tag, iters, repeats, extra=()):
    """Our train step in experiment_runner; returns {dynamo or "eager": record}."""
    directory = os.path.join(out_dir, tag)
    command = [runner, "--suite-name=torchbench", "--accelerator=cuda", "--xla=None",
               "--test=train", f"--filter=^{model}$", f"--repeat={repeats}",
               f"--iterations-per-run={iters}", f"--output-dirname={directory}", "--no-resume",
               *extra]
    with open(os.path.join(out_dir, tag + ".log"), "w") as log:
        subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
    records = {}
    path = os.path.join(directory, "results.jsonl")
    if os.path.exists(path):
        for line in open(path):
            record = json.loads(line)
            records[record["experiment"]["dynamo"] or "eager"] = record
    return records


def counted(values):
    return values[1:] if len(values) > 1 else values


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runner")
    parser.add_argument("out_dir")
    parser.add_argument("--models", default="resnet50,resnet18,mobilenet_v2")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--iters", type=int, default=20, help="steps per timed repeat")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed repeats per round (ours: one more, the warm-up)")
    parser.add_argument("--python-variants", default="python_eager,python_reduce_overhead",
                        help="Python steps to time: python_eager and/or python_reduce_overhead "
                             "(its train compile takes 40-110 s per model on an H100)")
    args = parser.parse_args()
    python_variants = [v for v in args.python_variants.split(",") if v]
    unknown = set(python_variants) - {"python_eager", "python_reduce_overhead"}
    if unknown:
        parser.error(f"--python-variants: unknown {sorted(unknown)}; expected python_eager "
                     "and/or python_reduce_overhead")
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_float32_matmul_precision("high")  # as experiment_runner without --disable-tf32
    table = []
    for name in args.models.split(","):
        samples = {"ours_eager": [], "ours_cudagraphs": [], "python_eager": [],
                   "python_reduce_overhead": []}
        notes = []
        steps = None
        for round_index in range(args.rounds):
            ours = run_ours(args.runner, name, args.out_dir, f"{name}-round{round_index}",
                            args.iters, args.repeats + 1, ["--dynamo=None", "--dynamo=cudagraphs"])
            for backend, record in ours.items():
                metrics = record["metrics"]
                if "per_iter_time" not in metrics:
                    notes.append(f"ours {backend}: {str(metrics.get('error', record))[:300]}")
                    continue
                samples["ours_" + backend] += [t * 1e3 for t in counted(metrics["per_iter_time"])]
                fallback = record.get("compile", {}).get("capture_fallback")
                if fallback and round_index == 0:
                    notes.append(f"cudagraphs capture_fallback: {fallback[:300]}")
            if steps is None:  # the Python steps, built and compiled once per model
                steps = {}
                batch = next((r["experiment"]["batch_size"] for r in ours.values()), None)
                timed = bool(batch) and has_original(name)
                if not timed:
                    notes.append("no pip original timed (none in torchvision, timm or "
                                 "transformers, or our run failed)")
                for variant in python_variants if timed else ():
                    torch._dynamo.reset()
                    model, inputs = python_model(name, batch)
                    model = model.cuda().train()
                    inputs = tuple(x.cuda() for x in inputs)
                    step = make_step(model, name)
                    if variant == "python_reduce_overhead":
                        step = torch.compile(step, mode="reduce-overhead")
                    started = time.perf_counter()
                    for _ in range(3):  # compile, then cudagraph trees record on later calls
                        step(*inputs)
                    torch.cuda.synchronize()
                    notes.append(f"{variant} warm-up/compile {time.perf_counter() - started:.1f} s")
                    steps[variant] = (step, inputs)
            for variant, (step, inputs) in steps.items():
                samples[variant] += time_per_iter(step, inputs, args.iters, args.repeats)
        cupti = run_ours(args.runner, name, args.out_dir, f"{name}-cupti", args.iters,
                         args.repeats + 1, ["--dynamo=cudagraphs", "--profile-cupti"])
        busy = None
        if "cudagraphs" in cupti and "cupti_per_iter_busy_time_s" in cupti["cudagraphs"]["metrics"]:
            busy = [b * 1e3 for b in
                    counted(cupti["cudagraphs"]["metrics"]["cupti_per_iter_busy_time_s"])]
        for variant, values in samples.items():
            print(json.dumps({"model": name, "variant": variant, "per_iter_ms": values}),
                  flush=True)
        print(json.dumps({"model": name, "variant": "ours_cudagraphs_cupti_busy",
                          "per_iter_ms": busy, "notes": notes}), flush=True)
        table.append((name, samples, busy, notes))
    print(f"\n{'model':14} {'variant':24} {'median ms':>10} {'min-max ms':>17} {'n':>3} "
          f"{'/py eager':>9}")
    for name, samples, busy, notes in table:
        reference = statistics.median(samples["python_eager"]) if samples["python_eager"] else None
        for variant, values in list(samples.items()) + [("ours_cudagraphs_busy", busy or [])]:
            if not values:
                print(f"{name:14} {variant:24} {'-':>10}")
                continue
            median = statistics.median(values)
            ratio = f"{median / reference:9.3f}" if reference else ""
            print(f"{name:14} {variant:24} {median:10.3f} {min(values):8.3f}-{max(values):8.3f} "
                  f"{len(values):3d} {ratio}")
        if busy and samples["ours_cudagraphs"]:
            print(f"{name:14} cudagraphs wall / GPU-busy = "
                  f"{statistics.median(samples['ours_cudagraphs']) / statistics.median(busy):.3f}")
        for note in notes:
            print(f"{name:14}   note: {note}")
    ratios = [statistics.median(samples["ours_eager"]) / statistics.median(samples["python_eager"])
              for _, samples, _, _ in table if samples["ours_eager"] and samples["python_eager"]]
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"\nours eager / Python eager train: geomean {geomean:.3f} over {len(ratios)} models "
              f"(max {max(ratios):.3f}; target: geomean <= 0.90, every model <= 1)")


if __name__ == "__main__":
    sys.exit(main())
