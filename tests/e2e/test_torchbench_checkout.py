"""--suite-name=torchbench on a TorchBench checkout: the fixture checkout (fixtures/torchbench_checkout,
pytorch/benchmark's layout in miniature) found by --torchbench-dir, BENCHMATRIX_TORCHBENCH_DIR or
the search of ./ to ../../../, its models built by python -m benchmatrix_import as PyTorch's
harness builds them (Model(test, device, batch_size).get_module(), dict inputs as keywords) and
run by every backend the CPU has with --verify; what cannot be built is a SKIP naming why; a bad
path is a usage error; records say where their model came from and resume as any other's."""
import os
import re
import shutil
import subprocess
import unittest

from harness import RUNNER, SHARED_CACHE, OutputDirTest, read_records, run

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.join(HERE, "fixtures", "torchbench_checkout")
RUNNABLE = ("tiny_mlp", "dict_inputs")


class TorchbenchCheckoutTest(OutputDirTest):
    def sweep(self, *args, cwd=None, env=None, check=True):
        proc = run(RUNNER, "--suite-name=torchbench", "--accelerator=cpu", "--xla=None",
                   "--repeat=1", f"--output-dirname={self.out}", f"--cache-dir={SHARED_CACHE}",
                   *args, cwd=cwd, env=env, check=check, timeout=1500)
        self.output = proc.stdout + proc.stderr
        return proc

    def records(self):
        return {(r["model"]["model_name"], r["experiment"]["dynamo"], r["experiment"]["test"]): r
                for r in read_records(self.results)}

    def test_checkout_models_run_every_cpu_backend_and_pass_verify(self):
        self.sweep(f"--torchbench-dir={CHECKOUT}", "--dynamo=None", "--dynamo=torchscript",
                   "--dynamo=inductor", "--test=eval", "--test=train", "--verify")
        self.assertIn(f"torchbench: the models of the TorchBench checkout {CHECKOUT} "
                      "(--torchbench-dir)", self.output)
        records = self.records()
        self.assertEqual({name for name, _, _ in records},
                         {"tiny_mlp", "dict_inputs", "eval_only", "needs_package"})
        for model in RUNNABLE:
            for dynamo in (None, "torchscript", "inductor"):
                for test in ("eval", "train"):
                    with self.subTest(model=model, dynamo=dynamo, test=test):
                        record = records[(model, dynamo, test)]
                        self.assertNotIn("error", record["metrics"])
                        self.assertEqual(record["verification_code"], "PASS",
                                         record.get("verification"))
                        source = record["model_source"]
                        self.assertEqual(source["kind"], "torchbench checkout")
                        self.assertEqual(source["checkout"], CHECKOUT)
                        self.assertEqual(source["class"], f"torchbenchmark.models.{model}.Model")
                        self.assertEqual(source["weights"], "as the model loads them")
                        # TorchBench's fp32, cast to the run's dtype (eval: bfloat16, the
                        # original runner's conversion_dtype; train: float32)
                        dtype = "bfloat16" if test == "eval" else "float32"
                        self.assertEqual(source["precision"], f"{dtype} (TorchBench built with "
                                         "--precision fp32, then cast)")
        # the batch size the model chose (its DEFAULT_{TRAIN,EVAL}_BSIZE), not a guess
        self.assertEqual(records[("tiny_mlp", None, "eval")]["experiment"]["batch_size"], 2)
        self.assertEqual(records[("tiny_mlp", None, "train")]["experiment"]["batch_size"], 4)
        # the inductor backend's eval compiled the model's torch.export program
        self.assertIn("exported_program", records[("dict_inputs", "inductor", "eval")]["model_source"])

        eval_only = records[("eval_only", None, "eval")]
        self.assertEqual(eval_only["verification_code"], "PASS")
        train = records[("eval_only", None, "train")]
        self.assertTrue(train["metrics"]["error"].startswith(
            "SKIP: torchbench/eval_only: eval_only does not implement test=train in TorchBench "
            "(torchbenchmark.models.eval_only does not support test=train)"), train["metrics"])
        self.assertEqual(train["verification_code"], "VERIFIER_SKIPPED")
        for test in ("eval", "train"):
            error = records[("needs_package", None, test)]["metrics"]["error"]
            self.assertTrue(error.startswith("SKIP: torchbench/needs_package: cannot be built here: "
                                             "needs_package needs the Python package "
                                             "'benchmatrix_fixture_missing_package', which is not "
                                             "installed"), error)

        # resume: the same sweep again runs nothing new
        before = len(read_records(self.results))
        self.sweep(f"--torchbench-dir={CHECKOUT}", "--dynamo=None", "--dynamo=torchscript",
                   "--dynamo=inductor", "--test=eval", "--test=train", "--verify")
        self.assertEqual(len(read_records(self.results)), before)

    def test_batch_size_flag_reaches_the_model(self):
        self.sweep(f"--torchbench-dir={CHECKOUT}", "--filter=^tiny_mlp$", "--dynamo=None",
                   "--test=eval", "--batch-size=5")
        record = self.records()[("tiny_mlp", None, "eval")]
        self.assertEqual(record["experiment"]["batch_size"], 5)

    def test_the_search_finds_a_checkout_named_benchmark_up_to_three_folders_up(self):
        work = os.path.join(self.out, "work")
        deep = os.path.join(work, "pytorch", "xla", "benchmarks")
        os.makedirs(deep)
        os.symlink(CHECKOUT, os.path.join(work, "benchmark"))
        env = {k: v for k, v in os.environ.items() if k != "BENCHMATRIX_TORCHBENCH_DIR"}
        self.sweep("--filter=^tiny_mlp$", "--dynamo=None", "--test=eval", cwd=deep, env=env)
        self.assertIn("found at ../../../benchmark", self.output)
        record = self.records()[("tiny_mlp", None, "eval")]
        self.assertEqual(record["model_source"]["checkout"], os.path.join(work, "benchmark"))
        # the variable names the checkout as the flag does; none is the built-in models
        env["BENCHMATRIX_TORCHBENCH_DIR"] = "none"
        self.sweep("--filter=^dcgan$", "--dynamo=None", "--test=eval", "--batch-size=1", cwd=deep,
                   env=env)
        self.assertIn("torchbench: benchmatrix's built-in C++ models "
                      "(BENCHMATRIX_TORCHBENCH_DIR=none", self.output)
        record = self.records()[("dcgan", None, "eval")]
        self.assertEqual(record["model_source"]["kind"], "built-in")

    def test_the_yamls_canary_models_run_beside_the_models(self):
        # PyTorch's harness: torchbenchmark/models/ plus the canary_models/ that its YAML lists
        # (torchrec_dlrm); an unlisted canary model is not run
        checkout = os.path.join(self.out, "checkout")
        shutil.copytree(CHECKOUT, checkout)
        canaries = os.path.join(checkout, "torchbenchmark", "canary_models")
        for name in ("torchrec_dlrm", "unlisted_canary"):
            shutil.copytree(os.path.join(checkout, "torchbenchmark", "models", "tiny_mlp"),
                            os.path.join(canaries, name))
        self.sweep(f"--torchbench-dir={checkout}", "--dynamo=None", "--test=eval", "--dry-run")
        planned = set(re.findall(r'"model_name": "(\w+)"', self.output))
        self.assertEqual(planned, {"tiny_mlp", "dict_inputs", "eval_only", "needs_package",
                                   "torchrec_dlrm"})

    def test_a_folder_that_is_not_a_checkout_is_a_usage_error_naming_it(self):
        empty = os.path.join(self.out, "not_a_checkout")
        os.makedirs(empty)
        proc = self.sweep(f"--torchbench-dir={empty}", "--dynamo=None", "--test=eval",
                          check=False)
        self.assertEqual(proc.returncode, 2, self.output)
        self.assertIn(f"--torchbench-dir={empty} is not a TorchBench checkout: it holds no "
                      "torchbenchmark/__init__.py", proc.stderr)
        self.assertFalse(os.path.exists(self.results))
        proc = run(RUNNER, "--suite-name=dummy", f"--torchbench-dir={CHECKOUT}",
                   f"--output-dirname={self.out}", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--torchbench-dir is for --suite-name=torchbench", proc.stderr)


if __name__ == "__main__":
    unittest.main()
