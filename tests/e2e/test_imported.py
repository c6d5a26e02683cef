"""Models the C++ harness does not hand-port: the huggingface and timm_models suites (built by
python -m benchmatrix_import, run from C++ as loaded TorchScript programs) and a user's own
TorchScript file (--suite-name=exported --model-path). Small configs (fixtures/imported_configs)
keep each model to seconds on the CPU; nothing is downloaded."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from harness import RUNNER, SHARED_CACHE, OutputDirTest, read_records, run

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "imported_configs")
COMMON = ["--accelerator=cpu", "--xla=None", "--repeat=1", "--iterations-per-run=1", "--verify", "--no-resume",
          # imports are cached by content hash across test runs, as compiled packages are
          f"--cache-dir={SHARED_CACHE}"]

# A user's model: a small MLP traced by torch.jit.trace, its inputs a torch.save'd tuple.
MAKE_PROGRAM = """
import sys, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
x = torch.randn(3, 8)
torch.jit.trace(model, (x,)).save(sys.argv[1] + "/mlp.pt")
torch.save((x,), sys.argv[1] + "/mlp.inputs.pt")
"""

# A user's torch.export packages of the same MLP: one with its example inputs stored in the package
# (torch.export.save keeps those it was exported with), one with other inputs beside it, one with
# inputs its static shapes refuse (batch 5 for batch 3); and a file that only claims to be one.
MAKE_PACKAGES = MAKE_PROGRAM + """
exported = torch.export.export(model, (x,))
torch.export.save(exported, sys.argv[1] + "/mlp_stored_inputs.pt2")
torch.export.save(exported, sys.argv[1] + "/mlp_inputs_beside.pt2")
torch.save((torch.randn(3, 8),), sys.argv[1] + "/mlp_inputs_beside.inputs.pt")
torch.export.save(exported, sys.argv[1] + "/wrong_batch.pt2")
torch.save((torch.randn(5, 8),), sys.argv[1] + "/wrong_batch.inputs.pt")
with open(sys.argv[1] + "/not_a_package.pt2", "wb") as f:
    f.write(b"this is not a torch.export archive")
"""

# What users bring by mistake, each with good inputs beside it: a pickled module (torch.save), an
# archive cut short, a torch.export package named .pt.
MAKE_WRONG_FILES = MAKE_PROGRAM + """
import shutil
torch.save(model, sys.argv[1] + "/pickled.pt")
with open(sys.argv[1] + "/mlp.pt", "rb") as f:
    archive = f.read()
with open(sys.argv[1] + "/truncated.pt", "wb") as f:
    f.write(archive[:len(archive) // 2])
torch.export.save(torch.export.export(model, (x,)), sys.argv[1] + "/export_package.pt")
for name in ("pickled", "truncated", "export_package"):
    shutil.copy(sys.argv[1] + "/mlp.inputs.pt", sys.argv[1] + "/" + name + ".inputs.pt")
"""

# Programs whose inputs do not fit them: two inputs for a one-argument forward; inputs of the
# wrong shape; and a program whose allocation fails inside the TorchScript interpreter, with the
# CUDA caching allocator's wording (what a model too big for the GPU raises there). torch.jit.script
# reads the class's source, so this runs from a file.
MAKE_MISMATCHED_FILES = MAKE_PROGRAM + """
program = torch.jit.trace(model, (x,))
program.save(sys.argv[1] + "/two_inputs.pt")
torch.save((x, x), sys.argv[1] + "/two_inputs.inputs.pt")
program.save(sys.argv[1] + "/wrong_shape.pt")
torch.save((torch.randn(3, 5),), sys.argv[1] + "/wrong_shape.inputs.pt")


class AllocationFails(torch.nn.Module):
    def forward(self, x):
        if bool(x.sum() > -1e30):
            raise RuntimeError("CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total "
                               "capacity of 79.19 GiB of which 1.00 GiB is free.")
        return x


torch.jit.script(AllocationFails()).save(sys.argv[1] + "/too_big.pt")
torch.save((x,), sys.argv[1] + "/too_big.inputs.pt")
"""


class ImportedSuitesTest(OutputDirTest):
    def sweep(self, *args, tests=("eval", "train"), dynamo=("None",)):
        """Runs a sweep of COMMON, the tests and backends (--dynamo values: eager by default; a
        test of a compiled backend alone leaves eager out, the verifier runs eager anyway)."""
        env = dict(os.environ, BENCHMATRIX_CONFIG_DIR=FIXTURES)
        proc = run(RUNNER, *COMMON, *[f"--test={t}" for t in tests],
                   *[f"--dynamo={d}" for d in dynamo], *args,
                   f"--output-dirname={self.out}", env=env)
        self.output = proc.stdout + proc.stderr
        if not os.path.exists(self.results):
            return {}
        return {(r["model"]["model_name"], r["experiment"]["test"]): r
                for r in read_records(self.results)}

    def assert_pass(self, records, models):
        self.assertEqual(sorted(records), sorted((m, t) for m in models for t in ("eval", "train")))
        for key, record in records.items():
            self.assertEqual(record["verification_code"], "PASS", (key, record))
            self.assertEqual(len(record["metrics"]["total_time"]), 1)
            source = record["model_source"]
            self.assertIn("TorchScript interpreter", source["runtime"])
            self.assertTrue(source["program"].endswith(".pt"), source)

    def test_huggingface_models_run_eval_and_train_and_pass_verify(self):
        records = self.sweep("--suite-name=huggingface")
        self.assert_pass(records, ["BertForMaskedLM", "GPT2ForSequenceClassification"])
        for (model, test), record in records.items():
            self.assertEqual(record["model_source"]["kind"], "imported")
            # eager children load the program with the eager forward's attention masks
            self.assertEqual(record["model_source"]["traced_for"], "eager")
            self.assertEqual(record["experiment"]["batch_size"], 2)

    def test_timm_models_run_eval_and_train_and_pass_verify(self):
        records = self.sweep("--suite-name=timm_models", "--filter=deit|mobilenet")
        self.assert_pass(records, ["deit_tiny_patch16_224.fb_in1k", "mobilenetv2_100"])

    def test_a_causal_model_compiles_under_inductor_from_its_exported_program(self):
        # An inductor child loads the program traced as torch.compile sees the model (the causal
        # mask transformers builds under a tracer), not the eager child's (is_causal=True, no
        # mask): another cache entry, and a PASS against that program's own eager runs.
        self.sweep("--suite-name=huggingface", "--filter=GPT2", tests=("eval",),
                   dynamo=("None", "inductor"))
        records = {r["experiment"]["dynamo"]: r for r in read_records(self.results)}
        self.assertEqual(sorted(records, key=str), [None, "inductor"], self.output)
        for dynamo, traced_for in ((None, "eager"), ("inductor", "compiler")):
            record = records[dynamo]
            self.assertEqual(record["verification_code"], "PASS", record)
            self.assertEqual(record["model_source"]["traced_for"], traced_for)
            entry = os.path.dirname(record["model_source"]["program"])
            with open(os.path.join(entry, "manifest.json")) as f:
                self.assertEqual(json.load(f)["traced_for"], traced_for)
        self.assertNotEqual(records[None]["model_source"]["program"],
                            records["inductor"]["model_source"]["program"])
        # Inductor compiled the forward torch.export took of the model, from the same entry,
        # not the TorchScript program converted back (TS2EPConverter)
        inductor = records["inductor"]
        self.assertEqual(inductor["compile"]["program"], "torch.export package", inductor)
        self.assertEqual(os.path.dirname(inductor["model_source"]["exported_program"]),
                         os.path.dirname(inductor["model_source"]["program"]))
        self.assertNotIn("exported_program", records[None]["model_source"])
        # the switch back to the traced program is checked before anything runs
        proc = run(RUNNER, "--suite-name=huggingface", "--dynamo=inductor", "--dry-run",
                   f"--output-dirname={self.out}", check=False,
                   env=dict(os.environ, BENCHMATRIX_INDUCTOR_PROGRAM="trace"))
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("BENCHMATRIX_INDUCTOR_PROGRAM=trace: expected exported (the default) or traced",
                      proc.stderr)

    def test_the_torchscript_backend_runs_imported_models_eval_and_train(self):
        # LibTorch's tracer records the loaded program's ops as it records a hand-written model's
        # (the XLA backend's export of the same: test_xla_export; cudagraphs: the GPU's bench)
        self.sweep("--suite-name=huggingface,timm_models", "--filter=mobilenet|GPT2",
                   dynamo=("torchscript",))
        torchscript = {(r["model"]["model_name"], r["experiment"]["test"]): r
                       for r in read_records(self.results)}
        self.assertEqual(sorted(torchscript), [(m, t) for m in ("GPT2ForSequenceClassification",
                                                                "mobilenetv2_100")
                                               for t in ("eval", "train")], self.output)
        for key, record in torchscript.items():
            self.assertEqual(record["experiment"]["dynamo"], "torchscript", key)
            self.assertEqual(record["verification_code"], "PASS", (key, record))

    def test_a_damaged_import_cache_entry_gives_an_error_record_saying_how_to_rebuild_it(self):
        records = self.sweep("--suite-name=huggingface", "--filter=Bert", tests=("eval",))
        entry = os.path.dirname(records[("BertForMaskedLM", "eval")]["model_source"]["program"])
        # the same entry (its key is its content's hash, not its place) in a cache of our own
        cache = os.path.join(self.out, "cache")
        shutil.copytree(entry, os.path.join(cache, "imported", os.path.basename(entry)))
        damaged = os.path.join(cache, "imported", os.path.basename(entry), "model.pt")
        with open(damaged, "r+b") as f:
            f.truncate(os.path.getsize(damaged) // 2)
        records = self.sweep("--suite-name=huggingface", "--filter=Bert", f"--cache-dir={cache}",
                             tests=("eval",))
        error = records[("BertForMaskedLM", "eval")]["metrics"]["error"]
        self.assertIn(f"cannot load {damaged} as a TorchScript archive", error)
        self.assertIn("the file is not a zip archive, or a damaged (e.g. truncated) one", error)
        self.assertIn(f"(an import cache entry: remove {os.path.dirname(damaged)} and the next run "
                      "rebuilds it)", error)

    def test_seq2seq_models_get_the_inputs_pytorchs_harness_gives_them(self):
        # huggingface.py passes decoder_input_ids to T5/M2M100/MT5 (and BlenderbotFor-
        # ConditionalGeneration); Pegasus and BlenderbotSmall derive theirs from the labels.
        # The helper's own build code on the meta device: no memory, no download, seconds.
        probe = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
from benchmatrix_import.__main__ import build_huggingface
names = {}
for model in sys.argv[2:]:
    with torch.device("meta"):
        names[model] = build_huggingface(model, 2, "meta", {})[2]
print(json.dumps(names))
"""
        python_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
        proc = subprocess.run([sys.executable, "-c", probe, python_dir,
                               "T5ForConditionalGeneration", "PegasusForConditionalGeneration",
                               "BlenderbotSmallForConditionalGeneration"],
                              check=True, capture_output=True, text=True)
        names = json.loads(proc.stdout.strip().splitlines()[-1])
        self.assertEqual(names["T5ForConditionalGeneration"],
                         ["input_ids", "decoder_input_ids", "labels"])
        self.assertEqual(names["PegasusForConditionalGeneration"], ["input_ids", "labels"])
        self.assertEqual(names["BlenderbotSmallForConditionalGeneration"], ["input_ids", "labels"])

    def test_a_program_with_shape_arithmetic_converts_for_the_inductor_backend(self):
        # tf_efficientnet_b0's "same" padding computes pads from the input's size; traced as
        # tensor arithmetic, TS2EPConverter (the inductor backend's first step) failed on it with
        # "Could not guard on data-dependent expression". The helper's sizes are constants now.
        probe = """
import sys, torch
sys.path.insert(0, sys.argv[1])
from benchmatrix_compile.__main__ import static_shapes_in_ts2ep
from torch._export.converter import TS2EPConverter
program = torch.jit.load(sys.argv[2] + "/model.pt")
inputs = tuple(torch.load(sys.argv[2] + "/inputs.pt"))
with static_shapes_in_ts2ep():
    exported = TS2EPConverter(program, inputs).convert()
torch.testing.assert_close(exported.module()(*inputs), program(*inputs))
"""
        python_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
        overrides = os.path.join(self.out, "overrides.yaml")
        with open(overrides, "w") as f:
            f.write("tf_efficientnet_b0: {input_size: [3, 32, 32]}\n")
        result = os.path.join(self.out, "entry")
        env = dict(os.environ, PYTHONPATH=python_dir, HF_HUB_OFFLINE="1")
        subprocess.run([sys.executable, "-m", "benchmatrix_import", "--suite=timm_models",
                        "--model=tf_efficientnet_b0", "--batch-size=2", "--test=eval",
                        "--device=cpu", f"--overrides={overrides}",
                        f"--cache-dir={os.path.join(self.out, 'imported')}",
                        f"--result={result}"], check=True, env=env)
        with open(result) as f:
            entry = f.read()
        subprocess.run([sys.executable, "-c", probe, python_dir, entry], check=True, env=env)

    def test_filter_selects_within_an_imported_suite(self):
        records = self.sweep("--suite-name=huggingface", "--filter=Bert", tests=("eval",))
        self.assertEqual({model for model, _ in records}, {"BertForMaskedLM"})

    def test_own_torchscript_file_runs_and_a_corrupt_one_gives_an_error_record(self):
        models = tempfile.mkdtemp(dir=self.out)
        subprocess.run([sys.executable, "-c", MAKE_WRONG_FILES, models], check=True)
        with open(os.path.join(models, "corrupt.pt"), "wb") as f:
            f.write(b"this is not a TorchScript archive")
        with open(os.path.join(models, "corrupt.inputs.pt"), "wb") as f:
            f.write(b"nor a pickle")
        records = self.sweep("--suite-name=exported", f"--model-path={models}")
        # the sweep goes on past every bad file: one record per model and test
        self.assertEqual(sorted({m for m, _ in records}),
                         ["corrupt", "export_package", "mlp", "pickled", "truncated"])
        why = {"corrupt": "the file is not a zip archive, or a damaged (e.g. truncated) one",
               "truncated": "the file is not a zip archive, or a damaged (e.g. truncated) one",
               "pickled": "it is a torch.save'd object (a pickled module or a state dict), not a "
                          "program: save one with torch.jit.trace(model, example_inputs)",
               "export_package": "it is a torch.export package (torch.export.save, a .pt2 "
                                 "ExportedProgram): name it FILE.pt2 and torch::nativert runs "
                                 "it"}
        for test in ("eval", "train"):
            good = records[("mlp", test)]
            self.assertEqual(good["verification_code"], "PASS", good)
            self.assertEqual(good["model_source"]["kind"], "exported")
            self.assertEqual(good["experiment"]["batch_size"], 3)
            for name, reason in why.items():
                bad = records[(name, test)]
                self.assertNotEqual(bad["verification_code"], "PASS")
                error = bad["metrics"]["error"]
                self.assertIn(f"cannot load {os.path.join(models, name)}.pt as a TorchScript "
                              "archive", error)
                self.assertIn(reason, error)

    def test_own_export_package_runs_eval_in_nativert_and_under_inductor(self):
        models = tempfile.mkdtemp(dir=self.out)
        subprocess.run([sys.executable, "-c", MAKE_PACKAGES, models], check=True)
        os.remove(os.path.join(models, "mlp.pt"))  # the packages only
        records = self.sweep("--suite-name=exported", f"--model-path={models}")
        self.assertEqual(sorted(records), sorted((m, t) for t in ("eval", "train") for m in
                                                 ("mlp_inputs_beside", "mlp_stored_inputs",
                                                  "not_a_package", "wrong_batch")), self.output)
        for name in ("mlp_stored_inputs", "mlp_inputs_beside"):
            record = records[(name, "eval")]
            self.assertEqual(record["verification_code"], "PASS", record)
            self.assertEqual(record["experiment"]["batch_size"], 3)
            source = record["model_source"]
            self.assertEqual(source["kind"], "exported")
            self.assertIn("torch::nativert", source["runtime"])
            self.assertEqual(source["program"], os.path.join(models, name + ".pt2"))
            # train: an error record saying why, for each package
            error = records[(name, "train")]["metrics"]["error"]
            self.assertIn(f"{models}/{name}.pt2 is a torch.export package, run by torch::nativert, "
                          "which runs inference only (no autograd): test=train needs a "
                          "TorchScript program", error)
        self.assertEqual(records[("mlp_inputs_beside", "eval")]["model_source"]["inputs"],
                         os.path.join(models, "mlp_inputs_beside.inputs.pt"))
        self.assertEqual(records[("mlp_stored_inputs", "eval")]["model_source"]["inputs"],
                         "stored in the package")
        error = records[("not_a_package", "eval")]["metrics"]["error"]
        self.assertIn(f"cannot load {models}/not_a_package.pt2 as a torch.export package "
                      "(expected the archive torch.export.save writes)", error)
        # the reason first, the helper's output after it
        error = records[("wrong_batch", "eval")]["metrics"]["error"]
        first = next(line for line in error.splitlines() if "experiment_runner: error:" in line)
        self.assertIn(f"{models}/wrong_batch.pt2 does not run on its example inputs "
                      f"(bfloat16[5, 8], from {models}/wrong_batch.inputs.pt; cast to bfloat16 on "
                      "cpu): AssertionError: Guard failed: input.size()[0] == 3", first)

        # a damaged cache entry (the helper found its manifest and reused it): the record says
        # which entry to remove
        cache = os.path.join(self.out, "cache")
        prepared = records[("mlp_stored_inputs", "eval")]["model_source"]["prepared"]
        shared_entry = os.path.dirname(prepared.split(" (")[0])  # "<entry>/exported.pt2 (...)"
        entry = os.path.join(cache, "imported", os.path.basename(shared_entry))
        shutil.copytree(shared_entry, entry)
        damaged = os.path.join(entry, "exported.pt2")
        with open(damaged, "r+b") as f:
            f.truncate(os.path.getsize(damaged) // 2)
        records = self.sweep("--suite-name=exported", f"--model-path={models}/mlp_stored_inputs.pt2",
                             f"--cache-dir={cache}", tests=("eval",))
        error = records[("mlp_stored_inputs", "eval")]["metrics"]["error"]
        self.assertIn(f"torch::nativert cannot load {damaged}", error)
        self.assertIn(f"(an import cache entry: remove {entry} and the next run rebuilds it)", error)

        # the inductor backend compiles the package itself (no TorchScript conversion); a
        # backend that traces the model says why it cannot
        self.sweep("--suite-name=exported", f"--model-path={models}/mlp_stored_inputs.pt2",
                   tests=("eval",), dynamo=("inductor", "torchscript"))
        records = {r["experiment"]["dynamo"]: r for r in read_records(self.results)}
        inductor = records["inductor"]
        self.assertEqual(inductor["verification_code"], "PASS", inductor)
        self.assertEqual(inductor["compile"]["program"], "torch.export package")
        self.assertIn("this backend traces the model's forward, but it runs in torch::nativert",
                      records["torchscript"]["metrics"]["error"])

    def test_inputs_that_do_not_match_the_program_give_clear_error_records(self):
        models = tempfile.mkdtemp(dir=self.out)
        maker = os.path.join(self.out, "make_mismatched_files.py")
        with open(maker, "w") as f:
            f.write(MAKE_MISMATCHED_FILES)
        subprocess.run([sys.executable, maker, models], check=True)
        os.remove(os.path.join(models, "mlp.pt"))
        records = self.sweep("--suite-name=exported", f"--model-path={models}")
        self.assertEqual(sorted({m for m, _ in records}), ["too_big", "two_inputs", "wrong_shape"])
        for test in ("eval", "train"):
            for record in (records[(m, test)] for m in ("too_big", "two_inputs", "wrong_shape")):
                self.assertNotEqual(record["verification_code"], "PASS")
            self.assertIn("hold 2 tensors but", records[("two_inputs", test)]["metrics"]["error"])
            # the first line of the error says it all; the TorchScript traceback follows
            first = next(line for line in
                         records[("wrong_shape", test)]["metrics"]["error"].splitlines()
                         if "experiment_runner: error:" in line)
            dtype = "BFloat16" if test == "eval" else "Float"  # CPU eval runs in bfloat16
            self.assertIn(f"{models}/wrong_shape.pt failed in the TorchScript interpreter on "
                          f"arguments ({dtype}[3, 5]): ", first)
            self.assertIn("mat1 and mat2 shapes cannot be multiplied (3x5 and 8x16)", first)
            # as for a hand-written model: the record says so first, then the allocator's message
            error = records[("too_big", test)]["metrics"]["error"]
            self.assertTrue(error.startswith("out of device memory"), error)
            self.assertIn("CUDA out of memory. Tried to allocate 20.00 GiB", error)
            self.assertIn("too_big.pt failed in the TorchScript interpreter", error)

    def test_an_imported_suite_and_an_own_program_run_in_one_sweep(self):
        models = tempfile.mkdtemp(dir=self.out)
        subprocess.run([sys.executable, "-c", MAKE_PROGRAM, models], check=True)
        records = self.sweep("--suite-name=huggingface,exported", f"--model-path={models}",
                             "--filter=^(BertForMaskedLM|mlp)$", tests=("eval",))
        self.assertEqual({key: r["model"]["suite_name"] for key, r in records.items()},
                         {("BertForMaskedLM", "eval"): "huggingface", ("mlp", "eval"): "exported"})
        for key, record in records.items():
            self.assertEqual(record["verification_code"], "PASS", (key, record))
        self.assertEqual(records[("mlp", "eval")]["model_source"]["kind"], "exported")
        self.assertEqual(records[("BertForMaskedLM", "eval")]["model_source"]["kind"], "imported")

    def test_model_path_is_required_by_and_only_for_the_exported_suite(self):
        proc = run(RUNNER, "--suite-name=exported", f"--output-dirname={self.out}", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--suite-name=exported needs --model-path", proc.stderr)
        proc = run(RUNNER, "--suite-name=huggingface,exported", f"--output-dirname={self.out}",
                   check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--suite-name=exported needs --model-path", proc.stderr)
        proc = run(RUNNER, "--suite-name=huggingface,timm_models", f"--model-path={self.out}",
                   f"--output-dirname={self.out}", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--model-path is for --suite-name=exported, not huggingface,timm_models",
                      proc.stderr)

    def test_model_path_names_one_program_file_or_a_directory_of_them(self):
        models = tempfile.mkdtemp(dir=self.out)
        for name in ("first.pt", "first.inputs.pt", "second.pt", "second.inputs.pt"):
            open(os.path.join(models, name), "wb").close()
        for path, expected in ((f"{models}/first.pt", ['"first"']),
                               (models, ['"first"', '"second"'])):
            proc = run(RUNNER, "--suite-name=exported", f"--model-path={path}", "--dry-run",
                       "--accelerator=cpu", "--xla=None", "--dynamo=None", "--test=eval")
            listed = re.findall(r'--model-config=\{"model_name": ("\w+")\}', proc.stderr)
            self.assertEqual(sorted(listed), expected, proc.stderr)
        # a .pt2 of the same name beside a .pt: refused, not one of them dropped
        open(os.path.join(models, "second.pt2"), "wb").close()
        proc = run(RUNNER, "--suite-name=exported", f"--model-path={models}", "--dry-run",
                   "--accelerator=cpu", "--xla=None", "--dynamo=None", "--test=eval", check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn('--model-path: two programs would both be model "second": ', proc.stderr)
        self.assertIn("(a model is named after its file; rename one)", proc.stderr)


if __name__ == "__main__":
    unittest.main()
