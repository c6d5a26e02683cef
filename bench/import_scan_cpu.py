"""A CPU pre-flight of the import helper over the lists (issue 25): before a GPU coverage run,
check that every model the run would import still traces, runs, converts and exports for
Inductor, after a change to python/benchmatrix_import or benchmatrix_compile (issue 25:
transformers' default SDPA attention instead of the eager one; MT5's compile that failed
on an H200 x2 in AOTAutograd, which step 3 now reaches). Not timings.

For each buildable model of configs/huggingface_models_list.txt not in the YAML's skip.all, and
of timm_models_list.txt (or the models named, either list's), at batch 2; huggingface models with
their layer counts cut to 1 (every int config attribute named in LAYER_KEYS; the test fixtures'
way of shrinking, through the helper's --overrides), timm's at full size:
  1. eval and train programs (float32, CPU) built by the helper's own main(), as the child's
     argv would build them, into a cache of their own; the eval program traced as the inductor
     backend's child has it (--traced-for=compiler), with its torch.export package
     (--exported-program, what the inductor backend compiles since eee2099);
  2. each loaded back with torch.jit.load and run on its inputs; train: backward of the first
     output's sum;
  3. eval, what the inductor backend compiles: the package loaded (torch.export.load), run and
     compared with the TorchScript program (rtol = atol = 1e-4), then AOTAutograd's export of it
     (aot_export_module, what aoti_compile_and_package does before lowering); where torch.export
     failed (exported.pt2.failed), the row says why and the fallback is checked instead:
     benchmatrix_compile's remove_mutations, TS2EPConverter with its static shapes, the same
     comparison and AOTAutograd's export;
and how many aten::scaled_dot_product_attention calls each program holds. Each model's programs
are removed after its checks. One JSON line per model to OUT (appended) and stdout.
Usage (from the repository root): python3 bench/import_scan_cpu.py OUT [--eval-only] [MODEL ...]
(--eval-only: the inductor backend's program only, no train program).
"""
import json
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded: fail at once instead

import torch  # noqa: E402
import transformers  # noqa: E402
from any_model_coverage import chosen_models, skip_all_reasons  # noqa: E402
from benchmatrix_compile.__main__ import static_shapes_in_ts2ep  # noqa: E402
from benchmatrix_compile.mutations_removed import remove_mutations  # noqa: E402
from benchmatrix_import.__main__ import run as import_program  # noqa: E402
from torch._export.converter import TS2EPConverter  # noqa: E402
from torch._functorch.aot_autograd import aot_export_module  # noqa: E402

# transformers config attributes that count layers (per model family), all cut to 1
LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "encoder_layers", "decoder_layers",
              "num_decoder_layers", "n_layers")
CONFIG_DIR = os.path.join(ROOT, "configs")


def one_layer_overrides(model_name):
    config = getattr(transformers, model_name).config_class()
    overrides = {k: 1 for k in LAYER_KEYS if isinstance(getattr(config, k, None), int)}
    if hasattr(config, "num_hidden_groups"):  # ALBERT: groups may not exceed layers
        overrides["num_hidden_groups"] = 1
    if hasattr(config, "attention_types"):  # GPT-Neo: one global and one local attention layer
        overrides = {k: 2 for k in overrides}
        overrides["attention_types"] = [[["global", "local"], 1]]
    return overrides


def check(suite, model_name, test, work):
    """(outcome, SDPA call count) of one program: imported, loaded, run, and for eval converted
    and exported for Inductor."""
    overrides = [f"--overrides={work}/overrides.yaml"] if suite == "huggingface" else []
    traced_for = ["--traced-for=compiler", "--exported-program"] if test == "eval" else []
    status, why = import_program([
        f"--suite={suite}", f"--model={model_name}", "--batch-size=2", f"--test={test}",
        "--device=cpu", "--dtype=float32", *overrides, *traced_for,
        f"--cache-dir={work}/cache", f"--result={work}/result"])
    if status:
        return f"import exited {status}: {why}", None
    with open(f"{work}/result") as f:
        entry = f.read().strip()
    program = torch.jit.load(os.path.join(entry, "model.pt"))
    inputs = tuple(torch.load(os.path.join(entry, "inputs.pt")))
    sdpa = str(program.inlined_graph).count("aten::scaled_dot_product_attention")
    if test == "train":
        program.train()
        output = program(*inputs)
        (output[0] if isinstance(output, (tuple, list)) else output).float().sum().backward()
        return "ok", sdpa
    with torch.no_grad():
        expected = program(*inputs)
    failure = os.path.join(entry, "exported.pt2.failed")
    if os.path.exists(failure):  # the inductor backend falls back to the TorchScript program
        with open(failure) as f:
            why = f.read().strip()
        removed = remove_mutations(program)
        with static_shapes_in_ts2ep():
            exported = TS2EPConverter(program, inputs).convert()
        outcome = f"ok, {why}; TS2EP fallback ok ({removed} in-place ops made out-of-place)"
    else:
        exported = torch.export.load(os.path.join(entry, "exported.pt2"))
        outcome = "ok, torch.export package ok"
    with torch.no_grad():
        torch.testing.assert_close(exported.module()(*inputs), expected, rtol=1e-4, atol=1e-4)
        aot_export_module(exported.module(), inputs, trace_joint=False)
    return outcome + ", AOTAutograd ok", sdpa


def main(argv):
    if not argv:
        sys.exit(__doc__)
    out_path, named = argv[0], [a for a in argv[1:] if a != "--eval-only"]
    tests = ("eval",) if "--eval-only" in argv[1:] else ("eval", "train")
    skipped = skip_all_reasons(CONFIG_DIR, "huggingface")
    with tempfile.TemporaryDirectory(prefix="import-scan-") as work, open(out_path, "a") as out:
        for suite, model_name, _ in chosen_models(CONFIG_DIR, ",".join(named) or "all"):
            if suite == "huggingface":
                if model_name in skipped:
                    continue
                if getattr(transformers, model_name, None) is None:
                    continue  # not buildable here (a hub config or no such class): the table says
                with open(f"{work}/overrides.yaml", "w") as f:
                    f.write(f"{model_name}: {json.dumps(one_layer_overrides(model_name))}\n")
            row = {"suite": suite, "model": model_name, "transformers": transformers.__version__}
            for test in tests:
                started = time.time()
                try:
                    row[test], row[f"sdpa_{test}"] = check(suite, model_name, test, work)
                except Exception as e:  # the row says what failed; the scan goes on
                    first_line = str(e).splitlines()[0][:300] if str(e) else ""
                    row[test] = f"{type(e).__name__}: {first_line}"
                row[f"{test}_s"] = round(time.time() - started, 1)
            # the model's programs go (the whole list's, even at one layer, exceed 20 GB: the
            # embedding tables stay full size)
            shutil.rmtree(f"{work}/cache", ignore_errors=True)
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
