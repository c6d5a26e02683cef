"""The programs bench_nativert_vs_torchscript runs (issue 25: "an ExportedProgram package (LibTorch
2.11 ships a C++ runtime for those, torch::nativert; evaluate it)"): one transformers
BertForMaskedLM with random weights (return_dict off: its output is the tuple (logits,)), written
three ways into OUT_DIR:
  model.pt             torch.jit.trace of it, what the imported suites load (suites/imported);
  model.pt2            torch.export.export of it (non-strict), packaged with
                       torch.export.pt2_archive's package_pt2 under the name "model", the archive
                       torch::nativert::ModelRunnerHandle(path, "model") loads;
  model.decomposed.pt2 the same after run_decompositions() (core ATen), as PyTorch's own nativert
                       tests package it;
  inputs.pt            the example input ids, a torch.save'd tuple;
  expected.pt          the eager logits, for the bench's agreement check.
Usage: python3 bench/nativert_programs.py OUT_DIR [--layers N] [--shape BATCH,TOKENS]
(default: 2 layers, hidden 128, batch 1 x 8 tokens: a dispatch-bound forward, where a runtime's
cost per op shows).
"""
import argparse
import os

import torch
import transformers
from torch.export.pt2_archive._package import package_pt2


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--shape", default="1,8", help="batch,tokens of the input ids")
    args = parser.parse_args()
    batch, tokens = (int(v) for v in args.shape.split(","))
    os.makedirs(args.out_dir, exist_ok=True)
    torch.manual_seed(1337)
    config = transformers.BertConfig(num_hidden_layers=args.layers, hidden_size=128,
                                     num_attention_heads=2, intermediate_size=256,
                                     vocab_size=1000, max_position_embeddings=max(128, tokens))
    config.return_dict = False  # a tuple out, (logits,): what a traced program returns too
    model = transformers.BertForMaskedLM(config).eval()
    ids = torch.randint(0, config.vocab_size, (batch, tokens))
    with torch.no_grad():
        expected = model(ids)[0]
        torch.jit.trace(model, (ids,), check_trace=False).save(
            os.path.join(args.out_dir, "model.pt"))
        exported = torch.export.export(model, (ids,), strict=False)
        decomposed = exported.run_decompositions()
    package_pt2(os.path.join(args.out_dir, "model.pt2"), exported_programs={"model": exported})
    package_pt2(os.path.join(args.out_dir, "model.decomposed.pt2"),
                exported_programs={"model": decomposed})
    torch.save((ids,), os.path.join(args.out_dir, "inputs.pt"))
    torch.save((expected,), os.path.join(args.out_dir, "expected.pt"))
    traced = torch.jit.load(os.path.join(args.out_dir, "model.pt"))

    def calls(program):
        return sum(1 for n in program.graph.nodes if n.op == "call_function")
    print(f"{args.out_dir}: BertForMaskedLM, {args.layers} layers, input {batch}x{tokens}; "
          f"ATen calls per forward: model.pt {str(traced.inlined_graph).count('aten::')}, "
          f"model.pt2 {calls(exported)}, model.decomposed.pt2 {calls(decomposed)}")


if __name__ == "__main__":
    main()
