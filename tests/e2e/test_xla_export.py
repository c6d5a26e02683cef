"""The XLA backend's export half on the CPU (no PJRT plugin exists for the CPU): for dummy, four
torchbench models and two imported ones (a timm and a transformers program), experiment_runner --xla=PJRT --dynamo=openxla with BENCHMATRIX_XLA_EXPORT_ONLY=1
traces the model and has the compile helper export StableHLO + weights + compile options into the
compile cache; JAX's CPU client then compiles that module the way the C++ PJRT backend does
(bytecode, compile options, weights.bin, the kept arguments in order) and runs it on the inputs that
eager (--export both) ran on; the outputs must match eager's within the verifier's eval tolerance.
--test=train exports the joint train step the same way; JAX's CPU client runs it and its loss,
gradients and updated buffers must be torch autograd's for the same traced forward and state.
Needs torchax and jax (scripts/install_dependencies.sh installs them); skipped without them."""
import glob
import json
import os
import re
import sys
import unittest

import numpy

from harness import RUNNER, SHARED_CACHE, OutputDirTest, read_records, run

HERE = os.path.dirname(os.path.abspath(__file__))

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

try:
    import jax  # noqa: F401
    import torchax  # noqa: F401
    HAVE_JAX = True
except ImportError:
    HAVE_JAX = False

# nanogpt: traced under math attention (else the trace drops a .contiguous() the export needs);
# dlrm: embedding bags decomposed (torchax's lowering needs concrete offsets).
MODELS = [("dummy", "dummy"), ("torchbench", "resnet18"), ("torchbench", "dcgan"),
          ("torchbench", "nanogpt"), ("torchbench", "dlrm")]
# Loaded programs of the imported suites, reduced (fixtures/imported_configs): the XLA backend
# exports their traced forward as a hand-written model's.
MODELS += [("timm_models", "mobilenetv2_100"), ("huggingface", "GPT2ForSequenceClassification")]
IMPORTED_CONFIGS = os.path.join(HERE, "fixtures", "imported_configs")
# The train step's: dummy (the plain path) and dcgan (convolutions, BatchNorm buffers).
TRAIN_MODELS = [("dummy", "dummy"), ("torchbench", "dcgan")]
TOLERANCE = 1e-2  # --verify-tolerance's eval default


def close_enough(actual, expected, tol=TOLERANCE):
    """torch._dynamo.utils.same's float rule without a float64 reference: allclose at tol, else an
    RMSE within tol of the reference's scale (bfloat16 outputs of different kernels)."""
    if actual.dtype.kind in "biu":
        return numpy.array_equal(actual, expected)
    actual = actual.astype(numpy.float64)
    expected = expected.astype(numpy.float64)
    if numpy.allclose(actual, expected, rtol=tol, atol=tol):
        return True
    rmse = numpy.sqrt(numpy.mean((actual - expected) ** 2))
    return rmse <= tol * max(1.0, numpy.sqrt(numpy.mean(expected ** 2)))


@unittest.skipUnless(HAVE_JAX, "needs torchax and jax (scripts/install_dependencies.sh)")
class XlaExportTest(OutputDirTest):
    def export_directory(self, error):
        """The StableHLO export directory a BENCHMATRIX_XLA_EXPORT_ONLY record's SKIP names."""
        match = re.search(r"StableHLO exported to (\S+) \(not run\)", error)
        self.assertIsNotNone(match, error)
        return match.group(1)

    def config_dir_with_reduced_imports(self):
        """A config dir of the product's configs with the imported suites' reduced models
        (fixtures/imported_configs) in place of theirs, so that one sweep runs every suite."""
        merged = os.path.join(self.out, "configs")
        os.makedirs(merged)
        product = os.environ.get("BENCHMATRIX_CONFIG_DIR") or os.path.join(HERE, "..", "..", "configs")
        for directory in (product, IMPORTED_CONFIGS):  # the fixture's files replace the product's
            for name in os.listdir(directory):
                link = os.path.join(merged, name)
                if os.path.lexists(link):
                    os.remove(link)
                os.symlink(os.path.abspath(os.path.join(directory, name)), link)
        return merged

    def test_stablehlo_export_runs_on_jax_and_matches_eager(self):
        from benchmatrix_compile.stablehlo import load_program, run_with_jax

        exported = os.path.join(self.out, "eager")
        # every model in one sweep per backend: the compile service exports them all from one
        # Python process (one torch and JAX import, not seven)
        common = ["--accelerator=cpu", "--test=eval", "--repeat=1",
                  "--suite-name=" + ",".join(dict.fromkeys(suite for suite, _ in MODELS)),
                  "--filter=^(" + "|".join(model for _, model in MODELS) + ")$",
                  f"--output-dirname={self.out}",
                  f"--cache-dir={SHARED_CACHE}"]  # the imported suites' programs too
        suite_env = dict(os.environ, BENCHMATRIX_CONFIG_DIR=self.config_dir_with_reduced_imports())
        run(RUNNER, *common, "--xla=None", "--dynamo=None", "--export", "both",
            "--export-dir", exported, env=suite_env)
        env = dict(suite_env, BENCHMATRIX_XLA_EXPORT_ONLY="1")
        run(RUNNER, *common, "--xla=PJRT", "--dynamo=openxla", env=env, timeout=900)
        records = [r for r in read_records(self.results) if r["experiment"]["xla"] == "PJRT"]
        self.assertEqual(len(records), len(MODELS))
        for record in records:
            model = record["model"]["model_name"]
            with self.subTest(model=model):
                directory = self.export_directory(record["metrics"].get("error", ""))
                program = load_program(directory)
                self.assertEqual(program["platform"], "cpu")
                with open(os.path.join(directory, program["module_text"]), encoding="utf-8") as f:
                    text = f.read()
                self.assertIn("stablehlo.", text)
                self.assertIn("func.func public @main", text)
                with open(os.path.join(directory, "manifest.json"), encoding="utf-8") as f:
                    self.assertEqual(json.load(f)["artifact"], "xla_program.json")

                config = glob.glob(os.path.join(exported, f"*-{model}-bs*"))
                self.assertEqual(len(config), 1, config)
                with open(os.path.join(config[0], "manifest.json"), encoding="utf-8") as f:
                    tensors = json.load(f)["tensors"]
                load = lambda role: [numpy.load(os.path.join(config[0], t["file"]))
                                     for t in tensors if t["role"] == role]
                inputs, expected = load("input"), load("output")
                # the program computes in eager's dtypes (a traced Python number, a 0-dim float64
                # constant, made GPT2's GELU and logits float64 under torchax's promotion)
                self.assertEqual([o["dtype"] for o in program["outputs"]],
                                 [t["dtype"] for t in tensors if t["role"] == "output"])
                outputs = run_with_jax(directory, inputs)
                self.assertEqual(len(outputs), len(expected))
                for i, (actual, reference) in enumerate(zip(outputs, expected)):
                    error = numpy.abs(actual.astype(numpy.float64) - reference).max()
                    print(f"{model} output {i}: {actual.dtype} {actual.shape}, max abs error {error} "
                          f"(max abs value {numpy.abs(reference).max()})", file=sys.stderr)
                    self.assertEqual(actual.shape, reference.shape)
                    self.assertTrue(close_enough(actual, reference),
                                    f"{model} output {i}: max abs error {error}")

    def test_train_step_exports_and_runs_on_jax_with_eagers_loss_and_gradients(self):
        """--test=train: the joint train step (loss, prediction, every gradient, the updated
        BatchNorm buffers) exported to StableHLO with the parameters and buffers as inputs; JAX's
        CPU client runs it the way the C++ side does, and it must give what torch's autograd gives
        for the same traced forward, state and inputs (the helper's traced.pt, state.pt and
        inputs.pt in the export's directory): dummy, and dcgan (convolution_backward, which torchax
        lacks, and BatchNorm buffers)."""
        env = dict(os.environ, BENCHMATRIX_XLA_EXPORT_ONLY="1")
        run(RUNNER, "--accelerator=cpu", "--test=train", "--repeat=1",
            "--suite-name=" + ",".join(dict.fromkeys(suite for suite, _ in TRAIN_MODELS)),
            "--filter=^(" + "|".join(model for _, model in TRAIN_MODELS) + ")$",
            "--xla=PJRT", "--dynamo=openxla",
            f"--cache-dir={SHARED_CACHE}", f"--output-dirname={self.out}", env=env, timeout=900)
        records = read_records(self.results)
        self.assertEqual(len(records), len(TRAIN_MODELS))
        for record in records:
            model = record["model"]["model_name"]
            with self.subTest(model=model):
                directory = self.export_directory(record["metrics"].get("error", ""))
                gradients, updated = self.assert_train_program_is_autograds(directory, model)
                if model == "dcgan":  # a comparison of real gradients and buffer updates
                    self.assertGreater(max(float(g.abs().max()) for g in gradients), 0.1)
                    self.assertEqual(len(updated), 9)  # 3 BatchNorms' mean, var, count

    def assert_train_program_is_autograds(self, directory, model):
        """JAX's CPU client runs the exported train step in `directory` (seed 0 where it takes one)
        and it must give what torch's autograd gives for the same traced forward, state and inputs
        (the helper's traced.pt, state.pt and inputs.pt there). Returns autograd's gradients and
        updated buffers."""
        import torch
        from benchmatrix_compile.stablehlo import load_program, run_with_jax, torchax_to_numpy
        from benchmatrix_compile.train_step import reduce_to_scalar_loss

        program = load_program(directory)
        train = program["train"]
        load = lambda name: list(torch.load(os.path.join(directory, name), weights_only=True))
        inputs, state = load("inputs.pt"), load("state.pt")
        self.assertEqual(train["state_count"], len(state))
        outputs = run_with_jax(directory, [torchax_to_numpy(t) for t in state + inputs])

        count = train["parameter_count"]
        parameters = [p.clone().requires_grad_(p.is_floating_point()) for p in state[:count]]
        buffers = [b.clone() for b in state[count:]]
        forward = torch.jit.load(os.path.join(directory, "traced.pt"))
        prediction = forward(*inputs, *parameters, *buffers)
        if isinstance(prediction, torch.Tensor):
            prediction = (prediction,)
        loss = reduce_to_scalar_loss(prediction, list(range(len(prediction))), False)
        gradients = torch.autograd.grad(loss, parameters)
        updated = [buffers[i] for i in train["updated_buffers"]]
        expected = [loss, *prediction, *gradients, *updated]
        self.assertEqual(len(outputs), len(expected))
        self.assertEqual(train["prediction_count"], len(prediction))
        for i, (actual, reference) in enumerate(zip(outputs, expected)):
            reference = reference.detach().numpy()
            self.assertEqual(actual.shape, reference.shape, f"{model} output {i}")
            # float32 convolutions of XLA's and oneDNN's kernels, through BatchNorm's backward
            # (dcgan, batch 16: 8e-5 on a gradient of scale 0.02): the error's RMS within 1e-3 of
            # the tensor's, its largest within 1e-2 of the largest value. A wrong gradient is off
            # by its own size.
            error = actual.astype(numpy.float64) - reference
            rms = lambda x: float(numpy.sqrt(numpy.mean(numpy.square(x))))
            message = (f"{model} output {i}: error RMS {rms(error)}, max "
                       f"{numpy.abs(error).max()}; value RMS {rms(reference)}")
            self.assertLessEqual(rms(error), 1e-3 * rms(reference) + 1e-9, message)
            self.assertLessEqual(numpy.abs(error).max(), 1e-2 * numpy.abs(reference).max() + 1e-9,
                                 message)
        return gradients, updated

    def verifier_of_export_only_train_step(self, suite, model, *flags):
        """An openxla train config's timing child (export only), then its --verify child run by
        hand from the timing child's job file (a sweep starts no verifier after a SKIP, and the
        CPU has no PJRT plugin to run the program): (the timing record's export directory, the
        verifier's result). The verifier runs the eager references, exports the program it would
        run and skips, naming that program."""
        cache = os.path.join(self.out, "cache")  # a cold cache: the timing child runs the helper
        job = os.path.join(self.out, "job.json")
        run(RUNNER, "--accelerator=cpu", "--test=train", "--repeat=1", f"--suite-name={suite}",
            f"--filter=^{model}$", *flags, "--xla=PJRT", "--dynamo=openxla", f"--cache-dir={cache}",
            "--no-compile-service", f"--output-dirname={self.out}",
            env=dict(os.environ, BENCHMATRIX_XLA_EXPORT_ONLY="1",
                     BENCHMATRIX_PYTHON=os.path.join(HERE, "job_copying_compile_helper.sh"),
                     REAL_PYTHON=os.environ.get("BENCHMATRIX_PYTHON", sys.executable),
                     JOB_COPY=job), timeout=900)
        [record] = read_records(self.results)
        with open(job) as f:
            verifier_job = dict(json.load(f), role="verifier", result_path="")
        with open(job, "w") as f:
            json.dump(verifier_job, f)
        verifier = run(RUNNER, f"--job={job}",
                       env=dict(os.environ, BENCHMATRIX_XLA_EXPORT_ONLY="1"), timeout=900)
        result = json.loads(verifier.stdout.strip().splitlines()[-1])
        self.assertEqual(result["verification_code"], "VERIFIER_SKIPPED", result)
        return self.export_directory(record["metrics"]["error"]), result["verification"]

    def test_verifier_of_a_dropout_models_train_step_turns_its_dropout_off(self):
        """squeezenet1_1 (a Dropout(0.5) module): its timed train program draws XLA's own dropout
        masks (a seed argument), so --verify runs the references and the program with the Dropout
        modules in eval mode (verification.model_mode "dropout_off"), from a cache entry of its
        own that draws nothing; JAX runs that program to what torch's autograd gives for its
        trace, as the eager references compute it: a PASS on a GPU."""
        from benchmatrix_compile.stablehlo import load_program

        timed, verification = self.verifier_of_export_only_train_step(
            "torchbench", "squeezenet1_1", "--batch-size=2")
        self.assertEqual(verification["model_mode"], "dropout_off", verification)
        self.assertIn("Dropout modules in eval mode", verification["model_mode_reason"])
        verified = self.export_directory(verification["message"])
        self.assertNotEqual(verified, timed)  # never the timed program's entry
        kinds = lambda directory: [a["kind"] for a in load_program(directory)["arguments"]]
        self.assertIn("seed", kinds(timed))
        self.assertNotIn("seed", kinds(verified))
        self.assert_train_program_is_autograds(verified, "squeezenet1_1")

    def user_program_with_dropout(self, make):
        """A --model-path directory holding mlp.pt: Linear, dropout(0.5), Linear, made by
        `make(module, example)` (torch.jit.trace or script), and its inputs."""
        import torch

        class Mlp(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)

            def forward(self, x):
                return self.b(torch.nn.functional.dropout(self.a(x), 0.5, self.training))

        models = os.path.join(self.out, "models")
        os.makedirs(models)
        torch.manual_seed(0)
        x = torch.randn(3, 8)
        make(Mlp(), (x,)).save(os.path.join(models, "mlp.pt"))
        torch.save((x,), os.path.join(models, "mlp.inputs.pt"))
        return models

    def test_verifier_puts_the_module_in_eval_mode_for_dropout_outside_dropout_modules(self):
        """A scripted program's F.dropout(x, p, self.training): no Dropout module to turn off,
        but the program's eval mode removes it, so --verify runs in eval mode (PyTorch's harness's
        use_eval_mode) from an entry of its own that draws nothing."""
        import torch
        from benchmatrix_compile.stablehlo import load_program

        models = self.user_program_with_dropout(lambda m, x: torch.jit.script(m))
        timed, verification = self.verifier_of_export_only_train_step(
            "exported", "mlp", f"--model-path={models}")
        self.assertEqual(verification["model_mode"], "eval", verification)
        self.assertIn("PyTorch's accuracy harness", verification["model_mode_reason"])
        verified = self.export_directory(verification["message"])
        self.assertNotEqual(verified, timed)
        kinds = lambda directory: [a["kind"] for a in load_program(directory)["arguments"]]
        self.assertIn("seed", kinds(timed))
        self.assertNotIn("seed", kinds(verified))

    def test_verifier_of_a_dropout_free_train_step_keeps_train_mode(self):
        """dummy (no dropout): the train program draws nothing, so --verify keeps train mode and
        the timed program (the same cache entry)."""
        timed, verification = self.verifier_of_export_only_train_step("dummy", "dummy")
        self.assertEqual(verification["model_mode"], "train", verification)
        self.assertEqual(verification["model_mode_reason"],
                         "the XLA train program draws no random numbers")
        self.assertEqual(self.export_directory(verification["message"]), timed)

    def test_verifier_keeps_train_mode_where_eval_mode_keeps_the_dropout(self):
        """A user's program traced by torch.jit.trace in train mode has its dropout baked in (the
        trace's training flag is a constant): eval mode removes nothing, so --verify keeps train
        mode and the timed program, and says why rather than claiming eval mode."""
        import torch

        models = self.user_program_with_dropout(
            lambda m, x: torch.jit.trace(m, x, check_trace=False))
        timed, verification = self.verifier_of_export_only_train_step(
            "exported", "mlp", f"--model-path={models}")
        self.assertEqual(verification["model_mode"], "train", verification)
        self.assertIn("eval mode leaves random ops", verification["model_mode_reason"])
        self.assertEqual(self.export_directory(verification["message"]), timed)

    def test_unexportable_train_step_is_a_skip_naming_the_model(self):
        env = dict(os.environ, BENCHMATRIX_XLA_EXPORT_ONLY="1",
                   BENCHMATRIX_PYTHON=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "unexportable_train_helper.sh"))
        run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--repeat=1", "--xla=PJRT",
            "--dynamo=openxla", "--test=train", f"--cache-dir={os.path.join(self.out, 'cache')}",
            "--no-compile-service", f"--output-dirname={self.out}", env=env)
        (record,) = read_records(self.results)
        self.assertEqual(record["metrics"]["error"],
                         "SKIP: dynamo=openxla cannot export the train step of dummy to StableHLO: "
                         "GuardOnDataDependentSymNode: Could not guard on data-dependent "
                         "expression Eq(u0, 1)")

    def test_axis_rules_give_skip_records_with_reasons(self):
        run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--repeat=1", "--xla=PJRT",
            "--dynamo=None", "--dynamo=openxla", "--test=eval", "--test=train",
            f"--output-dirname={self.out}", env={k: v for k, v in os.environ.items()
                                                  if not k.startswith("BENCHMATRIX_XLA")
                                                  and k != "BENCHMATRIX_PJRT_PLUGIN"})
        by_config = {(r["experiment"]["dynamo"], r["experiment"]["test"]): r["metrics"]["error"]
                     for r in read_records(self.results)}
        self.assertIn("lazy tensor mode", by_config[(None, "eval")])
        self.assertIn("BENCHMATRIX_PJRT_PLUGIN", by_config[("openxla", "train")])
        self.assertIn("BENCHMATRIX_PJRT_PLUGIN", by_config[("openxla", "eval")])
        for error in by_config.values():
            self.assertTrue(error.startswith("SKIP: "), error)

    def test_torch_xla2_values_and_dump_hlo(self):
        """--torch-xla2=torch_export with xla=PJRT is the openxla export; extract_jax and xla=None
        are SKIP records with reasons. --dump-hlo puts --xla_dump_to=<out>/<model>/hlo-<basename> in
        the child's XLA_FLAGS, which the export helper inherits: its compile options must not carry
        them (they would override the compiling process's XLA_FLAGS and tie the cached export to
        one run's dump directory), and XLA must then honour XLA_FLAGS when it compiles them."""
        from benchmatrix_compile.stablehlo import load_program

        env = dict(os.environ, BENCHMATRIX_XLA_EXPORT_ONLY="1")
        run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--repeat=1", "--test=eval",
            "--xla=None", "--xla=PJRT", "--dynamo=None", "--torch-xla2", "torch_export",
            "--torch-xla2", "extract_jax", "--dump-hlo",
            f"--cache-dir={os.path.join(self.out, 'cache')}", f"--output-dirname={self.out}",
            env=env, timeout=900)
        by_config = {(r["experiment"]["xla"], r["experiment"]["torch_xla2"]): r["metrics"]["error"]
                     for r in read_records(self.results)}
        self.assertEqual(len(by_config), 4, by_config)
        for error in by_config.values():
            self.assertTrue(error.startswith("SKIP: "), error)
        self.assertIn("measure dispatch only", by_config[(None, "torch_export")])
        for xla in (None, "PJRT"):
            self.assertIn("--torch-xla2=torch_export", by_config[(xla, "extract_jax")])
        directory = self.export_directory(by_config[("PJRT", "torch_export")])

        dump_dirs = glob.glob(os.path.join(self.out, "dummy", "hlo-*"))
        self.assertEqual(len(dump_dirs), 1, dump_dirs)  # the XLA config's only
        self.assertIn("PJRT-None-dummy", dump_dirs[0])
        program = load_program(directory)
        with open(os.path.join(directory, program["compile_options"]), "rb") as f:
            options = f.read()
        self.assertNotIn(b"xla_dump_to", options)
        self.assertNotIn(os.path.basename(dump_dirs[0]).encode(), options)

        # In a fresh process (XLA reads XLA_FLAGS once per process), JAX's CPU client compiles the
        # module with those options and dumps where XLA_FLAGS says.
        dump_to = os.path.join(self.out, "xla-dump")
        script = ("import sys, numpy\n"
                  "from benchmatrix_compile.stablehlo import _numpy_dtype, load_program, run_with_jax\n"
                  "program = load_program(sys.argv[1])\n"
                  "inputs = [numpy.zeros(a['shape'], _numpy_dtype(a['dtype']))"
                  " for a in program['arguments'] if a['kind'] == 'input']\n"
                  "print(len(run_with_jax(sys.argv[1], inputs)))\n")
        python_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
        run(sys.executable, "-c", script, directory,
            env=dict(os.environ, XLA_FLAGS=f"--xla_dump_to={dump_to}",
                     PYTHONPATH=python_dir + os.pathsep + os.environ.get("PYTHONPATH", "")))
        self.assertTrue(any(name.endswith(".txt") for name in os.listdir(dump_to)), os.listdir(dump_to))


@unittest.skipUnless(HAVE_JAX, "needs torchax and jax (scripts/install_dependencies.sh)")
class TrainStepRandomOpsTest(unittest.TestCase):
    """A train step's random ops (dropout; on CUDA aten.native_dropout, which torchax cannot lower
    as such) draw from the module's seed argument: another seed, another mask; the same seed, the
    same mask; kept elements scaled by 1/(1-p) as torch's dropout does."""

    def test_dropout_mask_follows_the_seed(self):
        import tempfile

        import torch
        from benchmatrix_compile.stablehlo import export_stablehlo, load_program, run_with_jax

        class Dropout(torch.nn.Module):
            def forward(self, x):
                return (torch.ops.aten.native_dropout(x, 0.5, True)[0],)

        x = torch.ones(64, 64)
        with tempfile.TemporaryDirectory() as directory:
            export_stablehlo(torch.export.export(Dropout(), (x,)), (x,), "cpu", directory,
                             train={"parameter_count": 0})
            kinds = [a["kind"] for a in load_program(directory)["arguments"]]
            self.assertEqual(kinds, ["input", "seed"])
            first, again, other = (run_with_jax(directory, [x.numpy()], seed=s)[0]
                                   for s in (1, 1, 2))
        self.assertTrue(numpy.array_equal(first, again))
        self.assertGreater(numpy.mean(first != other), 0.3)
        self.assertEqual(set(numpy.unique(first).tolist()), {0.0, 2.0})
        self.assertAlmostEqual(float(numpy.mean(first == 0)), 0.5, delta=0.05)

    def test_in_place_dropout_keeps_float16(self):
        """ATen's in-place dropout (Dropout(inplace=True); on CUDA it draws with bernoulli_, not
        native_dropout) on a float16 activation: its noise, the activation and the matmul after it
        stay float16 (torchax's bernoulli lowering made a boolean mask and everything after it
        float32: mobilenet_v3_large's prediction under float16 autocast), the mask follows the
        seed, and kept elements are scaled by 1/(1-p)."""
        import tempfile

        import torch
        from benchmatrix_compile.stablehlo import export_stablehlo, load_program, run_with_jax

        class InPlaceDropout(torch.nn.Module):
            def forward(self, x, w):
                y = x.clone()
                noise = torch.empty_like(y).bernoulli_(0.8).div_(0.8)  # ATen's _dropout_impl
                y = y.mul_(noise)
                return y, torch.mm(y, w)

        x = torch.ones(64, 64, dtype=torch.float16)
        w = torch.ones(64, 64, dtype=torch.float16)
        with tempfile.TemporaryDirectory() as directory:
            export_stablehlo(torch.export.export(InPlaceDropout(), (x, w)), (x, w), "cpu",
                             directory, train={"parameter_count": 0})
            self.assertEqual([o["dtype"] for o in load_program(directory)["outputs"]],
                             ["float16", "float16"])
            (first, product), (other, _) = (run_with_jax(directory, [x.numpy(), w.numpy()],
                                                         seed=s) for s in (1, 2))
        self.assertEqual((first.dtype, product.dtype), (numpy.float16, numpy.float16))
        self.assertEqual(set(numpy.unique(first).tolist()), {0.0, 1.25})
        self.assertAlmostEqual(float(numpy.mean(first == 0)), 0.2, delta=0.05)
        self.assertGreater(numpy.mean(first != other), 0.1)

    def test_cuda_train_steps_dropout_exports_without_a_gpu(self):
        """The joint graph of a CUDA train step: its tensors on "cuda" (fake tensors, no GPU
        needed), native_dropout in the forward and native_dropout_backward with its mask. The mask
        must be drawn on the input's device (torchax's own rand_like decomposition drew it on the
        CPU: every model with dropout failed to export on CUDA, "found two different devices cpu,
        cuda:0"), and the backward must reuse the forward's mask."""
        import tempfile

        import torch
        from torch._subclasses.fake_tensor import FakeTensorMode
        from benchmatrix_compile.stablehlo import export_stablehlo, run_with_jax

        if not torch.backends.cuda.is_built():
            self.skipTest("this torch has no CUDA build to make fake CUDA tensors with")

        class DropoutAndBackward(torch.nn.Module):
            def forward(self, x):
                output, mask = torch.ops.aten.native_dropout(x, 0.5, True)
                gradient = torch.ops.aten.native_dropout_backward(torch.ones_like(x), mask, 2.0)
                return output, gradient

        x = torch.ones(64, 64)
        with FakeTensorMode():
            on_cuda = torch.empty(x.shape, device="cuda")
        exported = torch.export.export(DropoutAndBackward(), (on_cuda,), strict=False)
        with tempfile.TemporaryDirectory() as directory:
            # The module for JAX's CPU client: torchax lowers the ops whatever their device.
            export_stablehlo(exported, (x,), "cpu", directory, train={"parameter_count": 0})
            output, gradient = run_with_jax(directory, [x.numpy()], seed=1)
        self.assertEqual(set(numpy.unique(output).tolist()), {0.0, 2.0})
        self.assertTrue(numpy.array_equal(output, gradient))


    def test_autocast_softmaxes_return_float32_computed_in_float32(self):
        """autocast's softmax and log_softmax on CUDA: a float16 input, half_to_float=True, a
        float32 result computed in float32 (torchax ignored the flag: float16 out, computed in
        float16, and BERT_pytorch's train step failed --verify on a dtype mismatch)."""
        import tempfile

        import torch
        from torch._subclasses.fake_tensor import FakeTensorMode
        from benchmatrix_compile.stablehlo import export_stablehlo, run_with_jax

        if not torch.backends.cuda.is_built():
            self.skipTest("this torch has no CUDA build to make fake CUDA tensors with")

        class AutocastSoftmaxes(torch.nn.Module):
            def forward(self, x):
                return (torch.ops.aten._softmax(x, -1, True),
                        torch.ops.aten._log_softmax(x, -1, True))

        x = (torch.randn(8, 512) * 8).half()
        with FakeTensorMode():
            on_cuda = torch.empty(x.shape, dtype=torch.float16, device="cuda")
        exported = torch.export.export(AutocastSoftmaxes(), (on_cuda,), strict=False)
        with tempfile.TemporaryDirectory() as directory:
            export_stablehlo(exported, (x,), "cpu", directory, train={"parameter_count": 0})
            softmax, log_softmax = run_with_jax(directory, [x.numpy()], seed=1)
        self.assertEqual((softmax.dtype, log_softmax.dtype), (numpy.float32, numpy.float32))
        numpy.testing.assert_allclose(softmax, torch.softmax(x.float(), -1).numpy(),
                                      rtol=1e-5, atol=1e-7)
        numpy.testing.assert_allclose(log_softmax, torch.log_softmax(x.float(), -1).numpy(),
                                      rtol=1e-5, atol=1e-5)


@unittest.skipUnless(HAVE_JAX, "needs torchax and jax (scripts/install_dependencies.sh)")
class TrainStepLoweringsTest(unittest.TestCase):
    """The joint graph's backward ops that torchax lowers wrongly or not at all
    (convolution_backward, max_pool2d_with_indices_backward, avg_pool2d_backward,
    _adaptive_avg_pool2d_backward), through the compile helper's
    --train --format=stablehlo on a traced forward(x, *parameters, *buffers): JAX's CPU client must
    give torch autograd's loss, gradients and BatchNorm statistics."""

    def test_convolution_and_pooling_gradients_match_autograd(self):
        import subprocess
        import tempfile

        import torch
        import torch.nn.functional as F
        from benchmatrix_compile.stablehlo import load_program, run_with_jax, torchax_to_numpy

        class Forward(torch.nn.Module):
            def forward(self, x, weight, bias, scale, shift, fc_weight, fc_bias, mean, var):
                y = F.conv2d(x, weight, bias, stride=1, padding=1)
                y = F.batch_norm(y, mean, var, scale, shift, training=True)
                y = F.max_pool2d(F.relu(y), 3, 2, 1)  # overlapping windows
                y = torch.cat([F.adaptive_avg_pool2d(y, (2, 2)), F.avg_pool2d(y, 2)], 1)
                return F.linear(y.flatten(1), fc_weight, fc_bias)

        generator = torch.Generator().manual_seed(3)
        randn = lambda *shape: torch.randn(*shape, generator=generator)
        inputs = (randn(4, 3, 8, 8),)
        parameters = (randn(6, 3, 3, 3), randn(6), randn(6), randn(6), randn(5, 48), randn(5))
        buffers = (torch.zeros(6), torch.ones(6))
        state = parameters + buffers
        python = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
        with tempfile.TemporaryDirectory() as directory:
            path = lambda name: os.path.join(directory, name)
            traced = torch.jit.trace(Forward(), inputs + tuple(t.clone() for t in state))
            traced.save(path("traced.pt"))
            torch.save(inputs, path("inputs.pt"))
            torch.save(state, path("state.pt"))
            subprocess.run([sys.executable, "-m", "benchmatrix_compile", "--format=stablehlo",
                            "--train", "--torchscript", path("traced.pt"), "--inputs",
                            path("inputs.pt"), "--state", path("state.pt"),
                            "--parameter-count", str(len(parameters)), "--device=cpu",
                            "--out", path("out")], check=True, capture_output=True, timeout=600,
                           env=dict(os.environ, PYTHONPATH=python))
            self.assertEqual(load_program(path("out"))["train"]["updated_buffers"], [0, 1])
            outputs = run_with_jax(path("out"), [torchax_to_numpy(t) for t in state + inputs])

        leaves = [p.clone().requires_grad_() for p in parameters]
        statistics = [b.clone() for b in buffers]
        prediction = Forward()(*inputs, *leaves, *statistics)
        loss = prediction.sum() / prediction.numel()
        expected = [loss, prediction, *torch.autograd.grad(loss, leaves), *statistics]
        self.assertEqual(len(outputs), len(expected))
        for i, (actual, reference) in enumerate(zip(outputs, expected)):
            numpy.testing.assert_allclose(actual, reference.detach().numpy(), rtol=1e-4,
                                          atol=1e-5, err_msg=f"output {i}")


class EmbeddingBagDecompositionTest(unittest.TestCase):
    """stablehlo.py's embedding_bag decomposition (what dlrm's bags become for XLA) against torch's
    own kernel, on the cases dlrm does not exercise: every mode, empty bags, padding_idx,
    per-sample weights, include_last_offset, bfloat16 weights."""

    def test_matches_torch_embedding_bag(self):
        import torch
        from benchmatrix_compile.stablehlo import embedding_bag_decompositions

        decompose = embedding_bag_decompositions()[torch.ops.aten._embedding_bag_forward_only.default]
        generator = torch.Generator().manual_seed(7)
        weight = torch.randn(50, 6, generator=generator)
        indices = torch.randint(0, 50, (20,), generator=generator)
        indices[3] = indices[11] = 4  # some rows are the padding row below
        offsets = torch.tensor([0, 2, 2, 7, 7, 7, 15])  # bags 1, 3 and 4 are empty
        for mode, name in ((0, "sum"), (1, "mean"), (2, "max")):
            for padding_idx in (-1, 4):
                for per_sample in (False, True):
                    if per_sample and mode != 0:
                        continue  # torch allows per-sample weights with sum only
                    for include_last in (False, True):
                        for dtype in (torch.float32, torch.bfloat16):
                            with self.subTest(mode=name, padding_idx=padding_idx, per_sample=per_sample,
                                              include_last=include_last, dtype=dtype):
                                w = weight.to(dtype)
                                psw = torch.rand(20, generator=generator).to(dtype) if per_sample else None
                                bag_offsets = torch.cat([offsets, torch.tensor([20])]) if include_last else offsets
                                expected = torch.nn.functional.embedding_bag(
                                    indices, w, bag_offsets, mode=name, per_sample_weights=psw,
                                    include_last_offset=include_last,
                                    padding_idx=None if padding_idx < 0 else padding_idx)
                                actual = decompose(w, indices, bag_offsets, False, mode, False, psw,
                                                   include_last, padding_idx)[0]
                                self.assertEqual(actual.dtype, expected.dtype)
                                torch.testing.assert_close(actual, expected, rtol=1e-2 if dtype == torch.bfloat16 else 1e-5,
                                                           atol=1e-2 if dtype == torch.bfloat16 else 1e-5)


if __name__ == "__main__":
    unittest.main()
