"""Compiled backends on the CPU: torchscript and inductor (AOTInductor) run and match eager, the
compile cache hits, detects corruption and survives failed compiles, and configs a backend cannot
run (cudagraphs without a GPU) get SKIP records that say why. inductor trains through its compiled
joint train step (forward, backward, eager's optimizer) and matches eager's loss, gradients and
updated parameters.

AOTInductor compiles take tens of seconds on a small machine, so the compiled packages live in a
per-user cache that outlasts the test run (as a user's would): reruns on one machine hit it."""
import json
import os
import shutil
import subprocess
import sys
import unittest

from harness import RUNNER, SHARED_CACHE, OutputDirTest, read_records, run, wait_until_dead
HERE = os.path.dirname(os.path.abspath(__file__))


def by_backend(records):
    return {(r["model"]["model_name"], r["experiment"]["dynamo"], r["experiment"]["test"]): r
            for r in records}


# A stem as the C++ models write it (conv, BatchNorm, ReLU, then torch::max_pool2d(x, 3, 2, 1), i.e.
# one-element kernel/stride/padding/dilation lists), a dropout and a linear head, traced in train
# mode.
# An LSTM between two linear layers, as TorchBench's tts_angular stacks them.
RECURRENT_MODEL = """
import sys, torch
class Recurrent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(6, 8, batch_first=True)
        self.linear = torch.nn.Linear(8, 4)
    def forward(self, x):
        out, _ = self.lstm(x)
        return self.linear(out[:, -1])
torch.manual_seed(0)
x = torch.randn(2, 5, 6)
torch.jit.trace(Recurrent().eval(), (x,)).save(sys.argv[1] + "/recurrent.pt")
torch.save((x,), sys.argv[1] + "/recurrent.inputs.pt")
"""

LIBTORCH_STYLE_POOLING = """
import sys, torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 4 * 4, 10)
    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.ops.aten.max_pool2d(y, [3], [2], [1], [1], False)
        return self.fc(torch.nn.functional.dropout(y.flatten(1), 0.5, self.training))
torch.manual_seed(0)
x = torch.randn(2, 3, 8, 8)
torch.jit.trace(Net().train(), (x,), check_trace=False).save(sys.argv[1] + "/pooling.pt")
torch.save((x,), sys.argv[1] + "/pooling.inputs.pt")
"""


class BackendTest(OutputDirTest):
    def sweep(self, *args, cache=SHARED_CACHE, env=None):
        run(RUNNER, "--accelerator=cpu", "--xla=None", "--repeat=2", f"--output-dirname={self.out}",
            f"--cache-dir={cache}", "--no-resume", *args, env=env, timeout=1500)
        return by_backend(read_records(self.results))

    def test_cpu_matrix_gives_real_records_and_explained_skips(self):
        records = self.sweep("--suite-name=dummy", "--dynamo=None", "--dynamo=inductor",
                             "--dynamo=torchscript", "--dynamo=cudagraphs", "--test=eval",
                             "--test=train", "--verify")
        self.assertEqual(len(records), 8)
        for dynamo, test in ((None, "eval"), (None, "train"), ("torchscript", "eval"),
                             ("torchscript", "train"), ("inductor", "eval"), ("inductor", "train")):
            with self.subTest(dynamo=dynamo, test=test):
                record = records[("dummy", dynamo, test)]
                metrics = record["metrics"]
                self.assertNotIn("error", metrics)
                self.assertEqual(len(metrics["per_iter_time"]), 2)
                self.assertEqual(record["verification_code"], "PASS", record.get("verification"))
                if dynamo:  # preparation is measured on its own, never inside the repeats
                    self.assertGreater(metrics["compile_time_s"][0], 0)
                else:
                    self.assertNotIn("compile_time_s", metrics)
        self.assertIn("cache_hit", records[("dummy", "inductor", "eval")]["compile"])
        self.assertIn("cache_hit", records[("dummy", "inductor", "train")]["compile"])
        for test in ("eval", "train"):
            cudagraphs = records[("dummy", "cudagraphs", test)]
            self.assertIn("SKIP: dynamo=cudagraphs needs accelerator=cuda", cudagraphs["metrics"]["error"])
            self.assertEqual(cudagraphs["verification_code"], "VERIFIER_SKIPPED")

    def test_torchbench_models_match_eager(self):
        records = self.sweep("--suite-name=torchbench", "--filter=^(squeezenet1_1|dcgan)$",
                             "--batch-size=1", "--dynamo=inductor", "--dynamo=torchscript",
                             "--test=eval", "--verify")
        self.assertEqual(len(records), 4)
        for key, record in records.items():
            with self.subTest(config=key):
                self.assertNotIn("error", record["metrics"])
                self.assertEqual(record["experiment"]["batch_size"], 1)
                self.assertEqual(record["verification_code"], "PASS", record["verification"])

    def test_torchbench_model_trains_under_inductor_and_matches_eager(self):
        # dcgan: BatchNorm statistics updated by the compiled step. Two verified steps: the second
        # starts from the first's update. Dropout drawn as eager draws it is the pooling model's
        # case below (a conv-BN-pool-dropout net of 8x8 images: squeezenet1_1's 224x224 train step
        # asserted the same at about 100 s of a 2-core machine's CPU compile, issue 48).
        records = self.sweep("--suite-name=torchbench", "--filter=^dcgan$",
                             "--batch-size=2", "--dynamo=inductor", "--test=train", "--verify",
                             "--verify-iterations=2")
        self.assertEqual(len(records), 1)
        for key, record in records.items():
            with self.subTest(config=key):
                self.assertNotIn("error", record["metrics"])
                self.assertEqual(len(record["metrics"]["per_iter_time"]), 2)
                self.assertGreater(record["metrics"]["compile_time_s"][0], 0)
                self.assertEqual(record["verification_code"], "PASS", record["verification"])

    def test_pooling_called_as_libtorch_calls_it_trains_under_inductor(self):
        # LibTorch's torch::max_pool2d(x, 3, 2, 1) passes one-element lists, which Inductor's
        # max_pool2d_with_indices_backward lowering rejected (resnet18's train step); the record
        # names the package it timed and verified and how its dropout draws.
        models = os.path.join(self.out, "models")
        os.makedirs(models)
        subprocess.run([sys.executable, "-c", LIBTORCH_STYLE_POOLING, models], check=True)
        records = self.sweep("--suite-name=exported", f"--model-path={models}/pooling.pt",
                             "--dynamo=inductor", "--test=train", "--verify",
                             "--verify-iterations=2")
        record = records[("pooling", "inductor", "train")]
        self.assertNotIn("error", record["metrics"])
        self.assertEqual(record["verification_code"], "PASS", record["verification"])
        self.assertTrue(record["compile"]["package"].endswith("train_step.pt2"), record["compile"])
        self.assertEqual(record["verification"]["package"], record["compile"]["package"])
        self.assertIs(record["verification"]["cache_hit"], True, record["verification"])
        self.assertIn("fallback_random", record["verification"]["random_ops"])

    def test_a_recurrent_model_under_autocast_compiles_in_the_dtype_autocast_ran(self):
        # aten::lstm is traced with its float32 weights and a float16 output: autocast casts
        # inside it. Without the casts written into the graph Inductor ran the LSTM in float32
        # (TorchBench's tts_angular: a float32 output against eager's float16, FAIL "dtype
        # mismatch" on the CPU; on CUDA a pad_mm error).
        models = os.path.join(self.out, "models")
        os.makedirs(models)
        subprocess.run([sys.executable, "-c", RECURRENT_MODEL, models], check=True)
        records = self.sweep("--suite-name=exported", f"--model-path={models}/recurrent.pt",
                             "--dynamo=inductor", "--precision=amp", "--test=eval", "--verify")
        record = records[("recurrent", "inductor", "eval")]
        self.assertNotIn("error", record["metrics"])
        self.assertEqual(record["verification"]["precision"], "float16 autocast")
        self.assertEqual(record["verification_code"], "PASS", record["verification"])

    def test_unexportable_train_step_is_a_skip_naming_the_model(self):
        env = dict(os.environ,
                   BENCHMATRIX_PYTHON=os.path.join(HERE, "unexportable_train_helper.sh"))
        # --no-compile-service: the stand-in is the helper's process (the service would not run it)
        records = self.sweep("--suite-name=dummy", "--dynamo=inductor", "--test=train",
                             "--no-compile-service", cache=os.path.join(self.out, "empty-cache"),
                             env=env)
        record = records[("dummy", "inductor", "train")]
        self.assertEqual(record["metrics"]["error"],
                         "SKIP: dynamo=inductor cannot export the train step of dummy: "
                         "GuardOnDataDependentSymNode: Could not guard on data-dependent "
                         "expression Eq(u0, 1)")
        self.assertEqual(record["verification_code"], "VERIFIER_SKIPPED")

    def test_second_run_hits_the_cache(self):
        args = ("--suite-name=dummy", "--dynamo=inductor", "--test=eval")
        self.sweep(*args)  # compiles, or hits an entry an earlier test run left
        compile = self.sweep(*args)[("dummy", "inductor", "eval")]["compile"]
        self.assertIs(compile["cache_hit"], True)
        self.assertNotIn("cache_rebuilt", compile)

    def test_cold_start_compiles_once_per_sweep_with_empty_inductor_caches(self):
        # --cold-start as PyTorch's --cold-start-latency: fresh Inductor and Triton caches for the
        # compile, and one compile per sweep (the verifier child reuses the timing child's build).
        log = os.path.join(self.out, "compile_env.log")
        env = dict(os.environ, BENCHMATRIX_PYTHON=os.path.join(HERE, "env_recording_compile_helper.sh"),
                   REAL_PYTHON=os.environ.get("BENCHMATRIX_PYTHON", sys.executable), COMPILE_ENV_LOG=log)
        cache = os.path.join(self.out, "cache")
        record = self.sweep("--suite-name=dummy", "--dynamo=inductor", "--test=eval", "--verify",
                            "--cold-start", "--no-compile-service", cache=cache,
                            env=env)[("dummy", "inductor", "eval")]
        self.assertEqual(record["verification_code"], "PASS")
        self.assertIs(record["compile"]["cache_hit"], False)
        self.assertGreater(record["metrics"]["compile_helper_s"][0], 0)
        with open(log) as f:
            compiles = f.read().splitlines()
        self.assertEqual(len(compiles), 1, compiles)  # not again in the verifier
        dirs = dict(item.split("=", 1) for item in compiles[0].split())
        for name in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
            self.assertTrue(dirs[name].startswith(os.path.join(cache, ".build-")), dirs[name])
            self.assertFalse(os.path.exists(dirs[name]))  # removed after the compile
        # The record says where the helper's time went (compile_timers.py), phases that add up to
        # at most its wall time; a cold compile probes the CPU's vector ISAs again.
        breakdown = record["compile"]["breakdown_s"]
        for phase in ("import_s", "export_s", "lowering_s", "codegen_s", "isa_probe_s",
                      "cpp_wrapper_compile_s", "cpp_kernel_compile_s", "cpp_link_s", "packaging_s"):
            self.assertGreaterEqual(breakdown[phase], 0, phase)
        self.assertGreater(breakdown["cpp_wrapper_compile_s"], 0)
        self.assertGreater(breakdown["isa_probe_s"], 0)
        # No precompiled headers for one compile: none built inside it, and none ahead (the CPU
        # probes its ISA here, headers_ahead.py)
        self.assertEqual(breakdown["cpp_other_s"], 0)
        self.assertLessEqual(sum(breakdown.values()), record["metrics"]["compile_helper_s"][0])
        self.assertGreaterEqual(record["compile"]["compile_threads"], 1)

    def test_concurrent_compiles_share_the_compiler_caches(self):
        # Two runners compiling different packages at once into one cache directory both use its
        # Inductor/Triton caches (compiler-caches/), whose entries are written atomically: both
        # compiles succeed and leave only whole entries (no temporary files, readable probes).
        # The CPU's vector-ISA probes are kept per user (isa_probe_cache.py): an empty user cache
        # here, so that both compiles probe at once and write the same answers.
        cache = os.path.join(self.out, "cache")
        user_cache = os.path.join(self.out, "user-cache")
        env = dict(os.environ, XDG_CACHE_HOME=user_cache)
        outs = [os.path.join(self.out, f"run{batch}") for batch in (1, 2)]
        runs = [subprocess.Popen([RUNNER, "--accelerator=cpu", "--xla=None", "--repeat=1",
                                  f"--output-dirname={out}", f"--cache-dir={cache}", "--no-resume",
                                  "--suite-name=dummy", "--dynamo=inductor", "--test=eval",
                                  f"--batch-size={batch}"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 env=env)
                for batch, out in zip((1, 2), outs)]
        for proc in runs:
            output = proc.communicate(timeout=1500)[0]
            self.assertEqual(proc.returncode, 0, output[-3000:])
        for out in outs:
            record = read_records(os.path.join(out, "results.jsonl"))[0]
            self.assertNotIn("error", record["metrics"])
            self.assertIs(record["compile"]["cache_hit"], False)
            self.assertIn("breakdown_s", record["compile"])
        inductor = os.path.join(cache, "compiler-caches", "inductor")
        probes = os.path.join(user_cache, "benchmatrix", "isa_probes")
        self.assertTrue(os.listdir(probes))
        for name in os.listdir(probes):
            with open(os.path.join(probes, name)) as f:
                self.assertIn("supported", json.load(f))
        leftovers = [os.path.join(d, n) for top in (inductor, probes) for d, _, files in os.walk(top)
                     for n in files if n.endswith(".tmp")]
        self.assertEqual(leftovers, [])
        # A compile into another cache directory (as every new --output-dirname has by default)
        # takes this user's answers instead of probing again.
        other = os.path.join(self.out, "run3")
        run(RUNNER, "--accelerator=cpu", "--xla=None", "--repeat=1", f"--output-dirname={other}",
            f"--cache-dir={os.path.join(self.out, 'other-cache')}", "--no-resume",
            "--suite-name=dummy", "--dynamo=inductor", "--test=eval", "--batch-size=3", env=env,
            timeout=1500)
        compile = read_records(os.path.join(other, "results.jsonl"))[0]["compile"]
        self.assertIs(compile["cache_hit"], False)
        self.assertEqual(compile["breakdown_s"]["isa_probe_s"], 0, compile["breakdown_s"])

    def copy_of_shared_entries(self, kind):
        """A new cache directory under the test's output holding copies of the shared cache's
        entries for the dummy model whose description contains `kind` (only those: the shared
        cache also holds other tests' entries, StableHLO exports with gigabytes of weights)."""
        cache = os.path.join(self.out, "cache")
        os.makedirs(cache)
        for entry in os.listdir(SHARED_CACHE):
            manifest = os.path.join(SHARED_CACHE, entry, "manifest.json")
            if entry.startswith(".") or not os.path.exists(manifest):
                continue
            with open(manifest) as f:
                description = json.load(f).get("description", "")
            if description.startswith("model dummy;") and kind in description:
                shutil.copytree(os.path.join(SHARED_CACHE, entry), os.path.join(cache, entry))
        return cache

    def test_corrupted_entry_is_detected_and_rebuilt(self):
        args = ("--suite-name=dummy", "--dynamo=inductor", "--test=eval")
        self.sweep(*args)  # makes sure the shared cache has the entry, then corrupt a copy of it
        cache = self.copy_of_shared_entries("AOTInductor")
        corrupted = 0
        for entry in os.listdir(cache):
            package = os.path.join(cache, entry, "model.pt2")
            if os.path.exists(package):
                with open(package, "r+b") as f:
                    f.seek(100)
                    byte = f.read(1)
                    f.seek(100)
                    f.write(bytes([byte[0] ^ 0xFF]))
                corrupted += 1
        self.assertGreater(corrupted, 0)
        record = self.sweep(*args, cache=cache)[("dummy", "inductor", "eval")]
        self.assertNotIn("error", record["metrics"])
        self.assertIs(record["compile"]["cache_hit"], False)
        self.assertEqual(record["compile"]["cache_rebuilt"],
                         "corrupt entry: model.pt2's SHA-256 differs from the manifest's")
        record = self.sweep(*args, cache=cache)[("dummy", "inductor", "eval")]
        self.assertIs(record["compile"]["cache_hit"], True)

    def test_damaged_extracted_package_is_rebuilt_and_a_hit_loads_it_in_place(self):
        # The package's files are kept extracted in its entry (package/) and a hit loads them
        # there; the manifest records them, so a damaged one is found and the entry rebuilt.
        args = ("--suite-name=dummy", "--dynamo=inductor", "--test=eval", "--verify",
                "--print-subprocess")
        # the shared cache has the entry (this sweep's record names it); damage a copy of it
        record = self.sweep(*args)[("dummy", "inductor", "eval")]
        entry = os.path.basename(os.path.dirname(record["compile"]["package"]))
        cache = self.copy_of_shared_entries("AOTInductor defaults")
        package = os.path.join(cache, entry, "package")
        damaged = [f"package/{name}" for name in os.listdir(package) if name.endswith(".so")]
        self.assertEqual(len(damaged), 1, damaged)  # the wrapper library
        # the weights are a file beside it, not linked into it (BENCHMATRIX_WEIGHTS_IN_LIBRARY)
        self.assertEqual(len([n for n in os.listdir(package) if n.endswith("_weights.blob")]), 1,
                         os.listdir(package))
        with open(os.path.join(cache, entry, damaged[0]), "r+b") as f:
            f.seek(100)
            byte = f.read(1)
            f.seek(100)
            f.write(bytes([byte[0] ^ 0xFF]))
        problem = f"{damaged[0]}'s SHA-256 differs from the manifest's"
        proc = run(RUNNER, "--accelerator=cpu", "--xla=None", "--repeat=2",
                   f"--output-dirname={self.out}", f"--cache-dir={cache}", "--no-resume", *args,
                   timeout=1500)
        self.assertIn(f"is corrupt ({problem}); rebuilding it", proc.stderr)
        record = by_backend(read_records(self.results))[("dummy", "inductor", "eval")]
        self.assertEqual(record["verification_code"], "PASS", record.get("verification"))
        self.assertIs(record["compile"]["cache_hit"], False)
        self.assertEqual(record["compile"]["cache_rebuilt"], f"corrupt entry: {problem}")
        # The rebuilt entry is hit, loaded from its extracted files, and still verifies.
        proc = run(RUNNER, "--accelerator=cpu", "--xla=None", "--repeat=2",
                   f"--output-dirname={self.out}", f"--cache-dir={cache}", "--no-resume", *args,
                   timeout=1500)
        record = by_backend(read_records(self.results))[("dummy", "inductor", "eval")]
        self.assertIs(record["compile"]["cache_hit"], True)
        self.assertEqual(record["verification_code"], "PASS", record.get("verification"))
        entry = os.path.dirname(record["compile"]["package"])
        self.assertIn(f"loading the AOTInductor package extracted in {entry}/package",
                      proc.stderr)

    def test_a_compile_ahead_child_that_hits_does_not_load_the_package(self):
        # --compile-ahead on a warm cache: the compile-only child finds the entry and stops there;
        # only the timing child loads the package (one load per config, not two).
        args = ("--suite-name=dummy", "--dynamo=inductor", "--test=eval")
        self.sweep(*args)  # the shared cache has the entry
        proc = run(RUNNER, "--accelerator=cpu", "--xla=None", "--repeat=2",
                   f"--output-dirname={self.out}", f"--cache-dir={SHARED_CACHE}", "--no-resume",
                   "--compile-ahead=1", "--print-subprocess", *args, timeout=1500)
        self.assertIn("--compile-ahead: 1 of 1 config(s) ready", proc.stderr)
        self.assertEqual(proc.stderr.count("loading the AOTInductor package extracted in"), 1,
                         proc.stderr[-3000:])
        record = by_backend(read_records(self.results))[("dummy", "inductor", "eval")]
        self.assertIs(record["compile"]["ahead"]["cache_hit"], True)
        self.assertIs(record["compile"]["cache_hit"], True)

    def test_compile_settings_in_the_environment_key_the_package(self):
        # A package built with AOT_INDUCTOR_COMPILE_WRAPPER_OPT_LEVEL set is another package: the
        # setting is in its description and key, so neither package is reused for the other.
        args = ("--suite-name=dummy", "--dynamo=inductor", "--test=eval")
        setting = "AOT_INDUCTOR_COMPILE_WRAPPER_OPT_LEVEL"
        default_env = {k: v for k, v in os.environ.items() if k != setting}
        self.sweep(*args, env=default_env)  # the shared cache has the default entry; copy it
        cache = self.copy_of_shared_entries("AOTInductor defaults")
        before = set(os.listdir(cache))
        env = dict(default_env, **{setting: "O0"})
        record = self.sweep(*args, cache=cache, env=env)[("dummy", "inductor", "eval")]
        self.assertNotIn("error", record["metrics"])
        self.assertIs(record["compile"]["cache_hit"], False)
        new = [e for e in set(os.listdir(cache)) - before
               if os.path.exists(os.path.join(cache, e, "manifest.json"))]
        self.assertEqual(len(new), 1, new)
        with open(os.path.join(cache, new[0], "manifest.json")) as f:
            self.assertTrue(json.load(f)["description"].endswith(f"; {setting}=O0"))
        self.assertIs(self.sweep(*args, cache=cache, env=env)[("dummy", "inductor", "eval")]
                      ["compile"]["cache_hit"], True)
        self.assertIs(self.sweep(*args, cache=cache, env=default_env)[("dummy", "inductor", "eval")]
                      ["compile"]["cache_hit"], True)

    def test_failed_compile_is_an_error_record_with_the_helper_output(self):
        env = dict(os.environ, BENCHMATRIX_PYTHON=os.path.join(HERE, "failing_compile_helper.sh"))
        cache = os.path.join(self.out, "empty-cache")
        records = self.sweep("--suite-name=dummy", "--dynamo=inductor", "--dynamo=None",
                             "--test=eval", "--no-compile-service", cache=cache, env=env)
        error = records[("dummy", "inductor", "eval")]["metrics"]["error"]
        self.assertIn("the inductor compile helper", error)
        self.assertIn("exited with status 1", error)
        self.assertIn("InductorError: simulated compile failure", error)
        self.assertNotIn("error", records[("dummy", None, "eval")]["metrics"])  # the sweep went on
        self.assertEqual([e for e in os.listdir(cache) if not e.endswith(".lock")], [])

    def test_a_hanging_compile_is_stopped_with_its_child(self):
        pid_file = os.path.join(self.out, "helper.pid")
        env = dict(os.environ, BENCHMATRIX_PYTHON=os.path.join(HERE, "hanging_compile_helper.sh"),
                   HANGING_HELPER_PID_FILE=pid_file)
        records = self.sweep("--suite-name=dummy", "--dynamo=inductor", "--test=eval",
                             "--subprocess-timeout=5", "--subprocess-grace-period=0.5",
                             "--no-compile-service", cache=os.path.join(self.out, "empty-cache"),
                             env=env)
        self.assertIn("timed out after 5 seconds", records[("dummy", "inductor", "eval")]["metrics"]["error"])
        with open(pid_file) as f:
            pid = int(f.read())
        # the helper ran in the child's process group, which the parent's timeout signalled
        self.assertTrue(wait_until_dead(pid), f"the compile helper {pid} outlived its child")


if __name__ == "__main__":
    unittest.main()
