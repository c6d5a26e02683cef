"""Exported twins of hand-written TorchBench models (issue 25: "measure how the loaded program
compares with the hand-written torchbench models where both exist, e.g. resnet50, hf_Bert,
hf_GPT2: same step time within noise is the target").

Writes, for each model, the pip original (torchvision / transformers, random weights) traced with
torch.jit.trace at the hand-written model's batch size and input, as `--suite-name=exported`
takes it (README "your own model"): OUT_DIR/eval/<model>.pt + .inputs.pt traced in eval mode in bfloat16 and
OUT_DIR/train/<model>.pt + .inputs.pt traced in train mode in float32 (a trace bakes dropout's
and BatchNorm's mode into the program, so each test gets its own file; the eval program is traced
in the dtype the runner's precision rule casts eval to, as benchmatrix_import's eval programs are:
a float32 trace cast afterwards keeps the float32 tensors it creates inside, e.g. GPT2's attention
mask, and fails on mixed dtypes). Each trace then gets benchmatrix_import's own passes
(traced_sizes_as_constants, and float16_fill_values for the float32 train programs), so that the
imported side is what the imported suites run. The file stem is the
torchbench name, so the two suites' records of one model and test line up.

Inputs, as the hand-written models take them (suites/torchbench/*.cpp): resnet50 randn
[B, 3, 224, 224] (eval and train batch 32); hf_Bert BertForMaskedLM(BertConfig()) and hf_GPT2
GPT2LMHeadModel(GPT2Config()) int64 ids [B, L] (eval batch 1, train batch 4; L 512, but 1024
for hf_GPT2's eval, 256 on the CPU, as the ports take them: SEQUENCES), transformers'
default attention (SDPA, as the ports and benchmatrix_import's programs), no cache, the logits as
the output, and transformers' eager decision to skip the attention mask (benchmatrix_import's
eager_mask_decisions: with transformers 5.17 the traced hf_Bert carried a full mask and ran SDPA's
float32 math kernel, 1.9x its port's eval step on an H200, 2026-11-28).
Traced on DEVICE (default cuda where there is one, else cpu), the device the runner loads them on:
transformers' mask code creates tensors with the trace's device baked in (torch.arange(...,
device=cpu) in hf_Bert's program), so a CPU trace fails on CUDA with "Expected all tensors to be
on the same device" (its first GPU run, H200 x2, 2026-11-28). The inputs are saved on the CPU.
Usage: python3 bench/handwritten_twins.py OUT_DIR [--models resnet50,hf_Bert,hf_GPT2] [--device D]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from benchmatrix_import.__main__ import (  # noqa: E402
    eager_mask_decisions, float16_fill_values, traced_sizes_as_constants)

# torchbench name -> (eval batch, train batch): the hand-written models' defaults (configs and
# suites/torchbench), which the exported suite reads from the inputs' first dimension.
BATCHES = {"resnet50": (32, 32), "hf_Bert": (1, 4), "hf_GPT2": (1, 4)}
# torchbench name -> (eval tokens, train tokens): the ports' input lengths (suites/torchbench/
# hf_Bert.cpp, hf_GPT2.cpp: TorchBench's HUGGINGFACE_MODELS max_length, 512 for hf_Bert; hf_GPT2
# 1024 in eval and 512 in train), hf_GPT2's eval a quarter on the CPU (CPU_INPUT_SLICE)
SEQUENCES = {"hf_Bert": (512, 512), "hf_GPT2": (1024, 512)}
CPU_EVAL_SLICE = {"hf_GPT2": 4}


def sequence_length(name, test, device):
    """The token count of `name`'s port for `test` on `device` (None for image models)."""
    if name not in SEQUENCES:
        return None
    eval_tokens, train_tokens = SEQUENCES[name]
    if test == "train":
        return train_tokens
    return eval_tokens // CPU_EVAL_SLICE.get(name, 1) if device == "cpu" else eval_tokens


class LogitsOnly(torch.nn.Module):
    """A transformers model returning its logits alone (the hand-written ports' output)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, return_dict=False)[0]


def build(name):
    """The pip original of `name`, random weights, float32, on the CPU."""
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50(), lambda b, _: (torch.randn(b, 3, 224, 224),)
    import transformers
    if name == "hf_Bert":
        config = transformers.BertConfig()
        model = transformers.BertForMaskedLM(config)
        vocab = config.vocab_size
    elif name == "hf_GPT2":
        config = transformers.GPT2Config(use_cache=False)
        model = transformers.GPT2LMHeadModel(config)
        vocab = config.vocab_size
    else:
        raise SystemExit(f"handwritten_twins.py: unknown model {name!r}; expected some of "
                         f"{', '.join(BATCHES)}")
    return LogitsOnly(model), lambda b, tokens: (torch.randint(0, vocab, (b, tokens)),)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--models", default=",".join(BATCHES))
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    torch.manual_seed(1337)
    for name in [m for m in args.models.split(",") if m]:
        model, make_inputs = build(name)
        for test, batch in zip(("eval", "train"), BATCHES[name]):
            model.train(test == "train")
            dtype = torch.float32 if test == "train" else torch.bfloat16
            model.to(device=args.device, dtype=dtype)
            inputs = tuple((t.to(dtype) if t.is_floating_point() else t).to(args.device)
                           for t in make_inputs(batch, sequence_length(name, test, args.device)))
            # check_trace off: a train-mode trace has dropout, whose reruns differ by design.
            with torch.no_grad(), eager_mask_decisions():
                traced = torch.jit.trace(model, inputs, check_trace=False)
            # what benchmatrix_import does to every program it writes, so that this side is what
            # the imported suites run: shape arithmetic folded to the traced sizes (else each
            # aten::Int of a traced size is an item() call per forward: 100 in hf_Bert's eval on
            # the CPU, 251 in hf_GPT2's), float32 mask fills made float16's for CUDA's autocast
            traced_sizes_as_constants(traced)
            if dtype == torch.float32:
                float16_fill_values(traced)
            folder = os.path.join(args.out_dir, test)
            os.makedirs(folder, exist_ok=True)
            traced.save(os.path.join(folder, name + ".pt"))
            torch.save(tuple(t.cpu() for t in inputs), os.path.join(folder, name + ".inputs.pt"))
            print(f"{test}/{name}.pt: {type(model).__name__}, inputs "
                  f"{[tuple(t.shape) for t in inputs]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
