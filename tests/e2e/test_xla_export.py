"""The XLA backend's export half on the CPU (no PJRT plugin exists for the CPU): for dummy and two
torchbench models, experiment_runner --xla=PJRT --dynamo=openxla with BENCHMATRIX_XLA_EXPORT_ONLY=1
traces the model and has the compile helper export StableHLO + weights + compile options into the
compile cache; JAX's CPU client then compiles that module the way the C++ PJRT backend does
(bytecode, compile options, weights.bin, the kept arguments in order) and runs it on the inputs that
eager (--export both) ran on; the outputs must match eager's within the verifier's eval tolerance.
Needs torchax and jax (scripts/install_dependencies.sh installs them); skipped without them."""
import glob
import json
import os
import re
import sys
import unittest

import numpy

from harness import RUNNER, SHARED_CACHE, OutputDirTest, read_records, run

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

try:
    import jax  # noqa: F401
    import torchax  # noqa: F401
    HAVE_JAX = True
except ImportError:
    HAVE_JAX = False

MODELS = [("dummy", "dummy"), ("torchbench", "resnet18"), ("torchbench", "dcgan")]
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
    def test_stablehlo_export_runs_on_jax_and_matches_eager(self):
        from benchmatrix_compile.stablehlo import load_program, run_with_jax

        exported = os.path.join(self.out, "eager")
        for suite, model in MODELS:
            common = ["--accelerator=cpu", "--test=eval", "--repeat=1", f"--suite-name={suite}",
                      f"--filter=^{model}$", f"--output-dirname={self.out}"]
            run(RUNNER, *common, "--xla=None", "--dynamo=None", "--export", "both",
                "--export-dir", exported)
            env = dict(os.environ, BENCHMATRIX_XLA_EXPORT_ONLY="1")
            run(RUNNER, *common, "--xla=PJRT", "--dynamo=openxla", f"--cache-dir={SHARED_CACHE}",
                env=env, timeout=900)
        records = [r for r in read_records(self.results) if r["experiment"]["xla"] == "PJRT"]
        self.assertEqual(len(records), len(MODELS))
        for record in records:
            model = record["model"]["model_name"]
            with self.subTest(model=model):
                error = record["metrics"].get("error", "")
                match = re.search(r"StableHLO exported to (\S+) \(not run\)", error)
                self.assertIsNotNone(match, error)
                directory = match.group(1)
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
                outputs = run_with_jax(directory, inputs)
                self.assertEqual(len(outputs), len(expected))
                for i, (actual, reference) in enumerate(zip(outputs, expected)):
                    error = numpy.abs(actual.astype(numpy.float64) - reference).max()
                    print(f"{model} output {i}: {actual.dtype} {actual.shape}, max abs error {error} "
                          f"(max abs value {numpy.abs(reference).max()})", file=sys.stderr)
                    self.assertEqual(actual.shape, reference.shape)
                    self.assertTrue(close_enough(actual, reference),
                                    f"{model} output {i}: max abs error {error}")

    def test_axis_rules_give_skip_records_with_reasons(self):
        run(RUNNER, "--suite-name=dummy", "--accelerator=cpu", "--repeat=1", "--xla=PJRT",
            "--dynamo=None", "--dynamo=openxla", "--test=eval", "--test=train",
            f"--output-dirname={self.out}", env={k: v for k, v in os.environ.items()
                                                  if not k.startswith("BENCHMATRIX_XLA")
                                                  and k != "BENCHMATRIX_PJRT_PLUGIN"})
        by_config = {(r["experiment"]["dynamo"], r["experiment"]["test"]): r["metrics"]["error"]
                     for r in read_records(self.results)}
        self.assertIn("lazy tensor mode", by_config[(None, "eval")])
        self.assertIn("gives no backward", by_config[("openxla", "train")])
        self.assertIn("BENCHMATRIX_PJRT_PLUGIN", by_config[("openxla", "eval")])
        for error in by_config.values():
            self.assertTrue(error.startswith("SKIP: "), error)


if __name__ == "__main__":
    unittest.main()
