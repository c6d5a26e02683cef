"""Models the C++ harness does not hand-port: the huggingface and timm_models suites (built by
python -m benchmatrix_import, run from C++ as loaded TorchScript programs) and a user's own
TorchScript file (--suite-name=exported --model-path). Small configs (fixtures/imported_configs)
keep each model to seconds on the CPU; nothing is downloaded."""
import os
import subprocess
import sys
import tempfile
import unittest

from harness import RUNNER, SHARED_CACHE, OutputDirTest, read_records, run

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "imported_configs")
COMMON = ["--accelerator=cpu", "--xla=None", "--dynamo=None", "--repeat=1", "--iterations-per-run=1", "--verify", "--no-resume",
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


class ImportedSuitesTest(OutputDirTest):
    def sweep(self, *args, tests=("eval", "train")):
        env = dict(os.environ, BENCHMATRIX_CONFIG_DIR=FIXTURES)
        proc = run(RUNNER, *COMMON, *[f"--test={t}" for t in tests], *args,
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
            self.assertEqual(record["experiment"]["batch_size"], 2)

    def test_timm_models_run_eval_and_train_and_pass_verify(self):
        records = self.sweep("--suite-name=timm_models", "--filter=deit|mobilenet")
        self.assert_pass(records, ["deit_tiny_patch16_224.fb_in1k", "mobilenetv2_100"])

    def test_filter_selects_within_an_imported_suite(self):
        records = self.sweep("--suite-name=huggingface", "--filter=Bert", tests=("eval",))
        self.assertEqual({model for model, _ in records}, {"BertForMaskedLM"})

    def test_own_torchscript_file_runs_and_a_corrupt_one_gives_an_error_record(self):
        models = tempfile.mkdtemp(dir=self.out)
        subprocess.run([sys.executable, "-c", MAKE_PROGRAM, models], check=True)
        with open(os.path.join(models, "corrupt.pt"), "wb") as f:
            f.write(b"this is not a TorchScript archive")
        with open(os.path.join(models, "corrupt.inputs.pt"), "wb") as f:
            f.write(b"nor a pickle")
        records = self.sweep("--suite-name=exported", f"--model-path={models}")
        self.assertEqual(sorted({m for m, _ in records}), ["corrupt", "mlp"])
        for test in ("eval", "train"):
            good = records[("mlp", test)]
            self.assertEqual(good["verification_code"], "PASS", good)
            self.assertEqual(good["model_source"]["kind"], "exported")
            self.assertEqual(good["experiment"]["batch_size"], 3)
            bad = records[("corrupt", test)]
            self.assertNotEqual(bad["verification_code"], "PASS")
            self.assertIn("cannot load", bad["metrics"]["error"])
            self.assertIn("as a TorchScript archive", bad["metrics"]["error"])

    def test_inputs_that_do_not_match_the_program_give_an_error_record(self):
        models = tempfile.mkdtemp(dir=self.out)
        subprocess.run([sys.executable, "-c", MAKE_PROGRAM + """
torch.save((x, x), sys.argv[1] + "/mlp.inputs.pt")
""", models], check=True)
        records = self.sweep("--suite-name=exported", f"--model-path={models}/mlp.pt",
                             tests=("eval",))
        record = records[("mlp", "eval")]
        self.assertNotEqual(record["verification_code"], "PASS")
        self.assertIn("hold 2 tensors but", record["metrics"]["error"])

    def test_model_path_is_required_by_and_only_for_the_exported_suite(self):
        proc = run(RUNNER, "--suite-name=exported", f"--output-dirname={self.out}", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--suite-name=exported needs --model-path", proc.stderr)


if __name__ == "__main__":
    unittest.main()
