"""The command line of the real binary: help, usage errors (exit 2), dry runs and log lines."""
import os
import unittest

from harness import RUNNER, OutputDirTest, run


class CommandLineTest(OutputDirTest):
    def test_help_lists_every_flag_with_defaults(self):
        proc = run(RUNNER, "--help")
        for flag in ["--suite-name", "--filter", "--exclude", "--filter-by-tier", "--total-partitions",
                     "--accelerator", "--xla", "--dynamo", "--test", "--xla-flags", "--torch-xla2",
                     "--keep-model-data-on-cuda", "--batch-size", "--repeat", "--iterations-per-run",
                     "--pure-wall-time", "--randomize-input", "--subprocess-timeout", "--no-resume",
                     "--output-dirname", "--timestamp", "--matrix", "--retry-failed", "--export",
                     "--export-dir"]:
            self.assertIn(flag, proc.stdout)
        self.assertIn("[default: 1800]", proc.stdout)

    def test_usage_errors_exit_2_and_name_the_flag(self):
        proc = run(RUNNER, "--suite-name=dummy", "--accelerator=gpu", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("argument --accelerator: invalid choice: 'gpu'", proc.stderr)
        self.assertTrue(proc.stderr.startswith("usage: experiment_runner"))
        proc = run(RUNNER, "--accelerator=cpu", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("the following arguments are required: --suite-name", proc.stderr)
        proc = run(RUNNER, "--suite-name=torchbench", "-k", "no_such_model", "--dry-run", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no model of suite 'torchbench' matches -k no_such_model", proc.stderr)

    def test_a_memory_snapshot_needs_a_cuda_accelerator(self):
        proc = run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--dump-memory-snapshot",
                   f"--output-dirname={self.out}", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--dump-memory-snapshot records the CUDA caching allocator: it needs "
                      "--accelerator=cuda", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "results.jsonl")))

    def test_dry_run_logs_counts_and_run_lines_and_writes_nothing(self):
        proc = run(RUNNER, "--suite-name=dummy", "--dynamo", "openxla", "--dynamo", "inductor",
                   "--xla", "PJRT", "--xla", "None", "--test", "eval", "--test", "train",
                   "--accelerator", "cpu", "--dry-run", f"--output-dirname={self.out}")
        self.assertIn("INFO:experiment_runner:Number of selected experiment configs: 4", proc.stderr)
        self.assertIn("INFO:experiment_runner:Number of selected model configs: 1", proc.stderr)
        run_lines = [l for l in proc.stderr.splitlines() if "Run with --model-config=" in l]
        self.assertEqual(len(run_lines), 4)
        self.assertIn('Run with --model-config={"model_name": "dummy"} --experiment-config='
                      '{"accelerator": "cpu", "xla": "PJRT", "xla_flags": null, "dynamo": "openxla", '
                      '"torch_xla2": null, "test": "eval", "keep_model_data_on_cuda": false, '
                      '"enable_functionalization": false}', proc.stderr)
        import os
        self.assertFalse(os.path.exists(self.results))

    def test_torchbench_selection_with_tiers_and_partitions(self):
        proc = run(RUNNER, "--suite-name=torchbench", "--filter-by-tier=2", "--accelerator=cpu",
                   "--xla=None", "--dynamo=None", "--test=eval", "--dry-run")
        # The zoo's tier-2 models (xla_runner.md §2.4), in TorchBench's byte order.
        self.assertIn("Number of selected model configs: 5", proc.stderr)
        selected = [l.split('"model_name": "')[1].split('"')[0]
                    for l in proc.stderr.splitlines() if "Run with --model-config=" in l]
        self.assertEqual(selected, ["alexnet", "dcgan", "densenet121", "hf_Bert", "llama"])
        proc = run(RUNNER, "--suite-name=torchbench", "--filter-by-tier=1", "--accelerator=cpu",
                   "--xla=None", "--dynamo=None", "--test=eval", "--dry-run")
        selected = [l.split('"model_name": "')[1].split('"')[0]
                    for l in proc.stderr.splitlines() if "Run with --model-config=" in l]
        self.assertEqual(selected, ["BERT_pytorch", "dlrm", "hf_GPT2"])

    def test_config_dir_variable_empty_means_unset_and_its_errors_name_it(self):
        tier1 = ["--suite-name=torchbench", "--filter-by-tier=1", "--accelerator=cpu", "--xla=None",
                 "--dynamo=None", "--test=eval", "--dry-run"]
        # Empty: the checkout's configs/, not the working directory (which has no torchbench.yaml).
        proc = run(os.path.abspath(RUNNER), *tier1, cwd=self.out,
                   env={**os.environ, "BENCHMATRIX_CONFIG_DIR": ""})
        self.assertIn("Number of selected model configs: 3", proc.stderr)

        def fails(config_dir, *args):
            proc = run(os.path.abspath(RUNNER), *args, check=False, cwd=self.out,
                       env={**os.environ, "BENCHMATRIX_CONFIG_DIR": config_dir})
            self.assertNotEqual(proc.returncode, 0, proc.stderr)
            return proc

        missing = os.path.join(self.out, "missing")
        proc = fails(missing, "--suite-name=dummy", "--dry-run")
        self.assertEqual(proc.returncode, 2)
        self.assertIn(f"BENCHMATRIX_CONFIG_DIR={missing}: no such directory", proc.stderr)
        # A directory without the suite's YAML, or without the preset asked for.
        empty = os.path.join(self.out, "empty")
        os.mkdir(empty)
        proc = fails(empty, *tier1)
        self.assertIn(os.path.join(empty, "torchbench.yaml"), proc.stderr)
        self.assertIn(f"(the config dir is BENCHMATRIX_CONFIG_DIR={empty})", proc.stderr)
        proc = fails(empty, "--suite-name=dummy", "--matrix=smoke", "--dry-run")
        self.assertEqual(proc.returncode, 2)
        self.assertIn(f"no preset file {os.path.join(empty, 'matrices', 'smoke.yaml')}", proc.stderr)
        self.assertIn(f"(the config dir is BENCHMATRIX_CONFIG_DIR={empty})", proc.stderr)


if __name__ == "__main__":
    unittest.main()
