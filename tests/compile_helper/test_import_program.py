"""The import helper's program checks and rewrites (python/benchmatrix_import), on the CPU.

float16_fill_values: a float32 program traced
from a transformers-style attention mask (`masked_fill(mask, torch.finfo(dtype).min)`, dtype read
while tracing) or from TorchBench's BERT_pytorch mask (`masked_fill(mask == 0, -1e9)`) must run on
float16 scores, as the C++ train step runs it under CUDA's float16 autocast (DebertaV2's and
BERT_pytorch's train configs failed there: "value cannot be converted to type c10::Half without
overflow"), and give the float32 results it gave before.

check_disk_space: a program larger than the cache's free space is refused with a message that
says so, before torch.jit.save would die in C++ (SIGABRT, a backtrace; BlenderbotForCausalLM's
18 GB float64 program on the H100's full disk).

eager_mask_decisions: a transformers model traced without a padding mask holds no attention mask,
as its eager forward builds none, so that SDPA runs a flash or cuDNN kernel and not the float32
math kernel a mask can send it to (the imported hf_Bert's eval took 1.9x its hand-written port's
step on an H200 with transformers 5.17's mask; GPT2 carries a causal mask under any trace).

write_exported_program_or_why: the torch.export package the inductor backend compiles computes what
the module does; where torch.export fails on a model, the entry says why instead of the helper
failing, so that the inductor backend still compiles the model's TorchScript program.

build_torchbench: a TorchBench model whose data set is missing and whose fallback is Meta's internal
storage (Super_SloMo: "Failed to download data from manifold"), or that asserts its data set when
imported (yolov3), is a SKIP naming the data folder and install.py, not an error in an ERROR record.

state restore: the BatchNorm statistics the forward before tracing moved are put back, but a
buffer the forward shaped (a per-channel observer's, empty at first) keeps its shape.

hub configs: a TorchBench hf_* model reads its config from the HF cache HF_HOME names; a missing
one is a SKIP naming the hub id (transformers 5's offline error names only the hub's URL) and the
`hf download` that provides it.

package_version_reason: a TorchBench model written against another version of an installed package
(basic_gnn_*: sys.modules["torch_geometric.compile"], removed in torch_geometric 2.5) is a SKIP
naming the package, its installed version and what the model looked for, not a KeyError in an
ERROR record.

untraceable: a model torch.jit.trace refuses (TorchBench's microbench_unbacked_tolist_sum: a
torch._check of a size the tracer records as a tensor) is explained by the error and the model's
line that raised it, the SKIP its records give, not a traceback in an ERROR record."""
import importlib.metadata
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import torch

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
sys.path.insert(0, PYTHON_DIR)

from benchmatrix_import.__main__ import (  # noqa: E402
    NotEnoughDisk, UNBUILDABLE, check_disk_space, eager_mask_decisions, float16_fill_values,
    shape_arithmetic_folded, shape_arithmetic_on_cpu, traced_sizes_as_constants, untraceable)
from benchmatrix_import.__main__ import main as import_main  # noqa: E402
from benchmatrix_import.torchbench_checkout import (  # noqa: E402
    build_torchbench, package_version_reason)
from benchmatrix_import.exported_package import (  # noqa: E402
    FAILURE_NAME, PACKAGE_NAME, write_exported_program_or_why)


class MaskedAttention(torch.nn.Module):
    def forward(self, scores, mask):
        lowest = torch.finfo(scores.dtype).min
        filled = scores.masked_fill(~mask, lowest)
        # a clamp at the same value is not a fill: it keeps float32's bound (on float32 values)
        return torch.softmax(filled, -1), scores.float().clamp(min=lowest)


class ConstantMask(torch.nn.Module):
    """BERT_pytorch's attention (bert_pytorch/model/attention/single.py): -1e9 unless the scores
    are float16 when the model runs, which a float32 trace never sees."""

    def __init__(self, fill=-1e9):
        super().__init__()
        self.fill = fill

    def forward(self, scores, mask):
        return torch.softmax(scores.masked_fill(mask == 0, self.fill), -1)


def saved_and_loaded(traced):
    """The program as the C++ child gets it (benchmatrix_import saves it after the rewrite; the
    traced module's own executor keeps the plan of its first runs)."""
    buffer = io.BytesIO()
    torch.jit.save(traced, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)


def traced_program():
    scores = torch.randn(2, 4, 4)
    mask = torch.rand(2, 4, 4) > 0.3
    mask[..., 0] = True  # every row keeps a position
    traced = torch.jit.trace(MaskedAttention(), (scores, mask))
    return traced, scores, mask


class Padded(torch.nn.Module):
    """pyhpc_turbulent_kinetic_energy's pad (tke_pytorch.py): shape arithmetic on a traced size."""

    def forward(self, x):
        shape = list(x.shape)
        shape[1] += 2
        out = torch.zeros(shape, dtype=x.dtype, device=x.device)
        out[:, 1:-1] = x
        return out


class ShapeArithmeticTest(unittest.TestCase):
    """The tracer records `shape[1] += 2` as add_(NumToTensor(size), <constant 2>), the constant on
    the traced device: on CUDA the interpreter refused the CPU scalar plus the CUDA constant
    (pyhpc_turbulent_kinetic_energy's ERROR records, H100, 2026-12-07). The pass finds that
    constant (here already a CPU one: the build machine traces on the CPU) and the saved program
    still pads as the module does."""

    def test_the_size_constant_is_found_and_the_program_still_pads(self):
        x = torch.randn(3, 4)
        traced = torch.jit.trace(Padded(), (x,), check_trace=False)
        traced_sizes_as_constants(traced)
        self.assertEqual(shape_arithmetic_on_cpu(traced), ["aten::add_"])
        other = torch.randn(3, 4)
        self.assertTrue(torch.equal(saved_and_loaded(traced)(other), Padded()(other)))

    def test_arithmetic_on_tensors_is_not_shape_arithmetic(self):
        traced, scores, mask = traced_program()
        self.assertEqual(shape_arithmetic_on_cpu(traced), [])
        self.assertEqual(shape_arithmetic_folded(traced), [])

    def test_in_place_arithmetic_on_a_traced_size_is_folded_to_the_padded_size(self):
        # The constant's device no longer matters: the saved program holds no tensor arithmetic
        # on sizes at all (the CUDA trace's constant met the CPU size in the interpreter even
        # after shape_arithmetic_on_cpu, H100, 2026-12-07).
        x = torch.randn(3, 4)
        traced = torch.jit.trace(Padded(), (x,), check_trace=False)
        traced_sizes_as_constants(traced)
        self.assertEqual(shape_arithmetic_folded(traced), ["aten::add_"])
        program = saved_and_loaded(traced)
        self.assertEqual(program.graph.findAllNodes("prim::NumToTensor"), [])
        self.assertEqual(program.graph.findAllNodes("aten::add_"), [])
        other = torch.randn(3, 4)
        self.assertTrue(torch.equal(program(other), Padded()(other)))
        self.assertEqual(shape_arithmetic_on_cpu(traced), [])  # nothing left for it


class Float16FillValuesTest(unittest.TestCase):
    def test_the_float32_trace_overflows_float16_scores_without_it(self):
        traced, scores, mask = traced_program()
        with self.assertRaisesRegex(RuntimeError, "overflow"):
            saved_and_loaded(traced)(scores.half(), mask)

    def test_float16_scores_run_and_float32_results_stay(self):
        traced, scores, mask = traced_program()
        probabilities32, clamped32 = traced(scores, mask)
        self.assertEqual(float16_fill_values(traced), 1)  # the fill, not the clamp's bound
        program = saved_and_loaded(traced)
        after32, clamped_after = program(scores, mask)
        torch.testing.assert_close(after32, probabilities32, rtol=0, atol=0)
        torch.testing.assert_close(clamped_after, clamped32, rtol=0, atol=0)
        probabilities16, _ = program(scores.half(), mask)
        self.assertEqual(probabilities16.dtype, torch.float16)
        torch.testing.assert_close(probabilities16.float(), probabilities32, rtol=1e-2, atol=1e-3)
        self.assertTrue(torch.all(probabilities16[~mask] == 0))
        # the clamp keeps float32's lowest
        constants = [n.output().toIValue() for n in program.graph.findAllNodes("prim::Constant")
                     if n.output().type().kind() == "FloatType"]
        self.assertIn(torch.finfo(torch.float32).min, constants)

    def test_a_large_constant_mask_runs_on_float16_scores(self):
        scores = torch.randn(2, 4, 4)
        mask = (torch.rand(2, 4, 4) > 0.3).long()
        mask[..., 0] = 1
        traced = torch.jit.trace(ConstantMask(), (scores, mask))
        probabilities32 = traced(scores, mask)
        with self.assertRaisesRegex(RuntimeError, "overflow"):
            saved_and_loaded(traced)(scores.half(), mask)
        self.assertEqual(float16_fill_values(traced), 1)
        program = saved_and_loaded(traced)
        torch.testing.assert_close(program(scores, mask), probabilities32, rtol=0, atol=0)
        probabilities16 = program(scores.half(), mask)
        torch.testing.assert_close(probabilities16.float(), probabilities32, rtol=1e-2, atol=1e-3)
        self.assertTrue(torch.all(probabilities16[mask == 0] == 0))

    def test_fills_within_float16s_range_stay(self):
        inputs = (torch.randn(2, 4), torch.ones(2, 4).long())
        self.assertEqual(float16_fill_values(torch.jit.trace(ConstantMask(-1e4), inputs)), 0)
        self.assertEqual(float16_fill_values(torch.jit.trace(ConstantMask(-65504.0), inputs)), 0)


FIXTURE_CHECKOUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "fixtures",
                                "torchbench_checkout")


def checkout_with_model(work, name, source):
    """A copy of the fixture checkout under `work` with one more model, `name`, whose
    __init__.py is `source`; returns the copy's path."""
    checkout = os.path.join(work, "checkout")
    shutil.copytree(FIXTURE_CHECKOUT, checkout)
    model_dir = os.path.join(checkout, "torchbenchmark", "models", name)
    os.makedirs(model_dir)
    with open(os.path.join(model_dir, "__init__.py"), "w") as f:
        f.write(source)
    return checkout


def run_helper_process(checkout, work, model, *flags, env=None):
    """python -m benchmatrix_import --suite=torchbench of `model` on the CPU, in a process of its
    own as the runner starts it (this one may have imported another checkout's torchbenchmark);
    its cache and result file under `work`."""
    return subprocess.run(
        [sys.executable, "-m", "benchmatrix_import", "--suite=torchbench", f"--model={model}",
         f"--torchbench-dir={checkout}", "--device=cpu",
         f"--cache-dir={os.path.join(work, 'cache')}", f"--result={os.path.join(work, 'result')}",
         *flags],
        capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTHONPATH=PYTHON_DIR, **(env or {})))


NEEDS_DATA_MODEL = """
from torchbenchmark.util.model import BenchmarkModel


class Model(BenchmarkModel):
    DEFAULT_EVAL_BSIZE = 1

    def __init__(self, test, device, batch_size=None, extra_args=[]):
        super().__init__(test=test, device=device, batch_size=batch_size, extra_args=extra_args)
        try:
            from torchbenchmark.util.framework.fb.installer import install_data  # noqa: F401
        except Exception as e:
            raise RuntimeError(f"Failed to download data from manifold: {e}") from e
"""


ASSERTS_DATA_MODEL = """
import os
from torchbenchmark.util.model import BenchmarkModel

DATA_DIR = os.path.join(os.path.dirname(__file__), "no_such_data", "coco128")
assert os.path.exists(DATA_DIR), (
    f"Couldn't find coco128 data dir: {DATA_DIR}, please run install.py again.")


class Model(BenchmarkModel):
    DEFAULT_EVAL_BSIZE = 1
"""


class MissingDataSetTest(unittest.TestCase):
    def test_a_model_whose_data_set_is_missing_is_unbuildable_naming_install_py(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        checkout = checkout_with_model(work, "needs_data", NEEDS_DATA_MODEL)

        class Unbuildable(Exception):
            pass

        def forget_torchbenchmark():  # the package of another test's checkout, or of this one
            for name in [m for m in sys.modules if m.split(".")[0] == "torchbenchmark"]:
                del sys.modules[name]

        forget_torchbenchmark()
        self.addCleanup(forget_torchbenchmark)
        self.addCleanup(sys.path.remove, os.path.abspath(checkout))
        with self.assertRaises(Unbuildable) as raised:
            build_torchbench("needs_data", None, "cpu", "eval", checkout, False, Unbuildable)
        self.assertEqual(str(raised.exception),
                         f"needs_data needs its data set, which TorchBench's install.py downloads "
                         f"into {os.path.abspath(checkout)}/torchbenchmark/data/.data/ "
                         f"(run `python install.py needs_data` in the checkout where the network "
                         f"is reachable); "
                         f"its fallback, Meta's internal storage, failed: No module named "
                         f"'torchbenchmark.util.framework'")


    def test_a_model_that_asserts_its_data_set_at_import_is_unbuildable_naming_install_py(self):
        # TorchBench's yolov3: `assert os.path.exists(DATA_DIR), "Couldn't find coco128 data dir:
        # ..., please run install.py again."` in its __init__.py
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        checkout = checkout_with_model(work, "asserts_data", ASSERTS_DATA_MODEL)
        proc = run_helper_process(checkout, work, "asserts_data", "--test=eval")
        self.assertEqual(proc.returncode, UNBUILDABLE, proc.stderr[-3000:])
        self.assertIn(f"asserts_data needs its data set, which TorchBench's install.py downloads "
                      f"into {os.path.abspath(checkout)}/torchbenchmark/data/.data/ (run `python "
                      f"install.py asserts_data` in the checkout where the network is reachable): "
                      f"Couldn't find coco128 data dir: ", proc.stdout + proc.stderr)


HUB_CONFIG_MODEL = """
import torch
from transformers import AutoConfig, GPT2Model
from torchbenchmark.util.model import BenchmarkModel


class Model(BenchmarkModel):
    DEFAULT_EVAL_BSIZE = 1

    def __init__(self, test, device, batch_size=None, extra_args=[]):
        super().__init__(test=test, device=device, batch_size=batch_size, extra_args=extra_args)
        # as TorchBench's hf_* models build theirs: a hub config, random weights
        self.model = GPT2Model(AutoConfig.from_pretrained("benchmatrix-tests/tiny-gpt2")).eval()
        self.example_inputs = (torch.tensor([[1, 2, 3]]),)

    def get_module(self):
        return self.model, self.example_inputs
"""


def hf_cache_with_config(home, hub_id, config):
    """An HF cache at `home` (HF_HOME) holding `config` as hub_id's config.json, in the hub's
    layout (hub/models--ORG--NAME/snapshots/REVISION/, refs/main naming the revision)."""
    repo = os.path.join(home, "hub", "models--" + hub_id.replace("/", "--"))
    revision = "0" * 40
    os.makedirs(os.path.join(repo, "snapshots", revision))
    os.makedirs(os.path.join(repo, "refs"))
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(revision)
    with open(os.path.join(repo, "snapshots", revision, "config.json"), "w") as f:
        json.dump(config, f)


class HubConfigTest(unittest.TestCase):
    """A TorchBench hf_* model reads its config from the user's HF cache (HF_HOME), offline."""

    def build(self, hf_home):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        checkout = checkout_with_model(work, "hub_model", HUB_CONFIG_MODEL)
        return run_helper_process(checkout, work, "hub_model", "--test=eval",
                                  env={"HF_HOME": hf_home, "HF_HUB_OFFLINE": "1"})

    def test_a_config_missing_from_the_cache_is_unbuildable_naming_the_hub_id_and_the_cache(self):
        empty_home = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, empty_home)
        proc = self.build(empty_home)
        self.assertEqual(proc.returncode, UNBUILDABLE, proc.stderr[-3000:])
        self.assertIn(f"hub_model needs benchmatrix-tests/tiny-gpt2 from the HuggingFace hub, which "
                      f"is not in the HF cache ({empty_home}, HF_HUB_OFFLINE=1): on a machine with "
                      f"network run `hf download benchmatrix-tests/tiny-gpt2 config.json`",
                      proc.stdout + proc.stderr)

    def test_a_config_in_the_cache_builds_the_model(self):
        home = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, home)
        hf_cache_with_config(home, "benchmatrix-tests/tiny-gpt2", {
            "model_type": "gpt2", "vocab_size": 16, "n_positions": 8, "n_embd": 8, "n_layer": 1,
            "n_head": 2})
        proc = self.build(home)
        self.assertEqual(proc.returncode, 0, proc.stdout[-2000:] + proc.stderr[-3000:])


OBSERVED_MODEL = """
import torch
from torchbenchmark.util.model import BenchmarkModel


class PerChannelObserved(torch.nn.Module):
    \"\"\"A linear layer watched as torch.ao's PerChannelMinMaxObserver watches one: its min_val
    buffer starts empty and takes the channels' shape on the first call.\"\"\"

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)
        self.register_buffer("min_val", torch.tensor([]))

    def forward(self, x):
        y = self.linear(x)
        current = y.detach().amin(0)
        if self.min_val.numel() > 0:
            current = torch.minimum(current, self.min_val)
        self.min_val.resize_(current.shape)
        self.min_val.copy_(current)
        return y


class Model(BenchmarkModel):
    DEFAULT_TRAIN_BSIZE = 2
    DEFAULT_EVAL_BSIZE = 2

    def __init__(self, test, device, batch_size=None, extra_args=[]):
        super().__init__(test=test, device=device, batch_size=batch_size, extra_args=extra_args)
        self.model = PerChannelObserved().to(device)
        self.example_inputs = (torch.randn(self.batch_size, 4, device=device),)

    def get_module(self):
        return self.model, self.example_inputs
"""


class StateRestoredTest(unittest.TestCase):
    def test_a_buffer_the_first_forward_shapes_keeps_its_shape(self):
        # TorchBench's *_quantized_qat train on the H100 (2026-12-06): the per-channel observers'
        # empty buffers filled by the forward before tracing, then "restored" into their new shape
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        checkout = checkout_with_model(work, "observed", OBSERVED_MODEL)
        proc = run_helper_process(checkout, work, "observed", "--test=train")
        self.assertEqual(proc.returncode, 0, proc.stdout[-2000:] + proc.stderr[-3000:])
        with open(os.path.join(work, "result")) as f:
            entry = f.read().strip()
        program = torch.jit.load(os.path.join(entry, "model.pt"))
        [min_val] = [v for k, v in program.state_dict().items() if k.endswith("min_val")]
        self.assertEqual(min_val.shape, (3,))  # the channels' shape the program's branch needs


class PackageVersionReasonTest(unittest.TestCase):
    def test_a_submodule_the_installed_package_lacks(self):
        reason = package_version_reason("basic_gnn_gcn", KeyError("torch.no_such_module"))
        self.assertEqual(reason, "basic_gnn_gcn was written for another version of torch than the "
                                 f"installed {importlib.metadata.version('torch')}: the module "
                                 "torch.no_such_module, which is not there (the model's "
                                 "requirements.txt or install.py in TorchBench names the version "
                                 "it needs)")

    def test_a_name_the_installed_package_lacks(self):
        with self.assertRaises(ImportError) as raised:
            from torch import no_such_name  # noqa: F401
        reason = package_version_reason("m", raised.exception)
        self.assertIn("another version of torch", reason)
        self.assertIn(": cannot import name 'no_such_name' from 'torch' (the model's", reason)

    def test_other_errors_are_not_a_version_mismatch(self):
        for error in (KeyError("weights"), KeyError("torch.nn"), KeyError(3),
                      ModuleNotFoundError("no module", name="absent_package"),
                      KeyError("absent_package.sub")):
            with self.subTest(error=repr(error)):
                self.assertIsNone(package_version_reason("m", error))


class LogitsOf(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, return_dict=False)[0]


class EagerMaskDecisionsTest(unittest.TestCase):
    """Reduced models (2 layers, width 64), traced as benchmatrix_import traces them."""

    def attention_calls(self, model_class, config):
        import transformers
        torch.manual_seed(0)
        model = LogitsOf(getattr(transformers, model_class)(config)).eval()
        ids = torch.randint(0, config.vocab_size, (2, 16))
        with torch.no_grad(), eager_mask_decisions():
            traced = torch.jit.trace(model, (ids,), check_trace=False)
        with torch.no_grad():
            torch.testing.assert_close(saved_and_loaded(traced)(ids), model(ids))
        graph = traced.inlined_graph  # held: its nodes live as long as it
        calls = graph.findAllNodes("aten::scaled_dot_product_attention")
        self.assertEqual(len(calls), 2)  # one per layer
        # (query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
        return [(call.inputsAt(3).type().kind(), call.inputsAt(5).toIValue()) for call in calls]

    def test_a_causal_model_traces_is_causal_without_a_mask_tensor(self):
        import transformers
        config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=100,
                                         use_cache=False)
        self.assertEqual(self.attention_calls("GPT2LMHeadModel", config),
                         [("NoneType", True)] * 2)

    def test_a_bidirectional_model_traces_without_a_mask(self):
        import transformers
        config = transformers.BertConfig(num_hidden_layers=2, hidden_size=64,
                                         num_attention_heads=2, intermediate_size=128,
                                         vocab_size=100)
        self.assertEqual(self.attention_calls("BertForMaskedLM", config),
                         [("NoneType", False)] * 2)

    def test_the_helper_traces_a_graph_backends_program_with_the_compilers_masks(self):
        # --traced-for=compiler: the program an inductor child compiles holds the causal mask
        # transformers builds under torch.compile (PyTorch's harness compiles that graph); the
        # eager program is_causal=True without one
        fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e",
                                "fixtures", "imported_configs", "huggingface_model_overrides.yaml")
        masks = {}
        with tempfile.TemporaryDirectory() as cache:
            for traced_for in ("eager", "compiler"):
                result = os.path.join(cache, "result-" + traced_for)
                self.assertEqual(import_main([
                    "--suite=huggingface", "--model=GPT2ForSequenceClassification",
                    "--batch-size=2", "--test=eval", "--device=cpu", f"--overrides={fixtures}",
                    f"--traced-for={traced_for}", f"--cache-dir={cache}",
                    f"--result={result}"]), 0)
                with open(result) as f:
                    entry = f.read()
                graph = torch.jit.load(os.path.join(entry, "model.pt")).inlined_graph
                masks[traced_for] = {
                    (call.inputsAt(3).type().kind(), call.inputsAt(5).toIValue())
                    for call in graph.findAllNodes("aten::scaled_dot_product_attention")}
        self.assertEqual(masks["eager"], {("NoneType", True)})
        self.assertEqual(masks["compiler"], {("TensorType", False)})

    def test_transformers_asks_the_tracer_again_afterwards(self):
        from transformers import masking_utils
        before = masking_utils.is_tracing
        with eager_mask_decisions():
            self.assertIsNot(masking_utils.is_tracing, before)
        self.assertIs(masking_utils.is_tracing, before)


class CheckDiskSpaceTest(unittest.TestCase):
    def test_a_program_larger_than_the_free_space_is_refused_with_the_figures(self):
        linear = torch.nn.Linear(256, 256)  # 263 KB of parameters
        inputs = (torch.randn(4, 256),)
        traced = torch.jit.trace(linear, inputs)
        with tempfile.TemporaryDirectory() as directory:
            check_disk_space(traced, inputs, directory)  # the real disk has room
            usage = shutil.disk_usage(directory)
            full = usage._replace(free=10 << 20)  # 10 MiB left: less than the 16 MiB margin
            with mock.patch("shutil.disk_usage", return_value=full):
                with self.assertRaises(NotEnoughDisk) as raised:
                    check_disk_space(traced, inputs, directory)
            self.assertIn("0.02 GB", str(raised.exception))  # 263 KB + 1% + 16 MiB
            self.assertIn("0.01 GB are free", str(raised.exception))
            self.assertIn(directory, str(raised.exception))


class DataDependentBranch(torch.nn.Module):
    def forward(self, x):
        return x * 2 if x.sum() > 0 else x  # export cannot guard on a value


class WritesItsCache(torch.nn.Module):
    """TorchBench's llama in small: a KV cache held as a plain tensor attribute, converted to the
    input's dtype and written in the forward."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.cache = torch.zeros(2, 6, 4)

    def forward(self, x):
        self.cache = self.cache.to(x)
        self.cache[:x.shape[0], 1:1 + x.shape[1]] = self.proj(x)
        return self.cache[:x.shape[0], :1 + x.shape[1]].sum(1)


class ExportedProgramTest(unittest.TestCase):
    def test_a_cache_the_forward_writes_is_exported_as_a_buffer_inductor_can_lower(self):
        module = WritesItsCache().eval()
        x = torch.randn(2, 3, 4)
        expected = module(x)
        with tempfile.TemporaryDirectory() as directory:
            write_exported_program_or_why(module, (x,), directory)
            self.assertEqual(sorted(os.listdir(directory)), [PACKAGE_NAME])
            loaded = torch.export.load(os.path.join(directory, PACKAGE_NAME))
        # as a lifted constant: "Constant cache is mutated in the forward method" here, and
        # AOTInductor's "mutating a non-functional tensor with a functional tensor"
        decomposed = loaded.run_decompositions()
        self.assertEqual(list(decomposed.graph_signature.buffers_to_mutate.values()), ["cache"])
        with torch.no_grad():  # as the runner's eval calls it
            torch.testing.assert_close(decomposed.module()(x), expected)
        self.assertNotIn("cache", module.state_dict())  # a non-persistent buffer: state unchanged


    def test_the_package_computes_what_the_module_does(self):
        module = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()
        x = torch.randn(3, 8)
        with tempfile.TemporaryDirectory() as directory:
            write_exported_program_or_why(module, (x,), directory)
            self.assertEqual(sorted(os.listdir(directory)), [PACKAGE_NAME])  # no partial left
            loaded = torch.export.load(os.path.join(directory, PACKAGE_NAME))
            torch.testing.assert_close(loaded.module()(x), module(x))

    def test_a_model_export_fails_on_leaves_why_instead_of_a_package(self):
        with tempfile.TemporaryDirectory() as directory:
            with mock.patch("sys.stderr", new_callable=io.StringIO) as stderr:
                write_exported_program_or_why(DataDependentBranch(), (torch.randn(3),), directory)
            self.assertEqual(os.listdir(directory), [FAILURE_NAME])
            with open(os.path.join(directory, FAILURE_NAME)) as f:
                why = f.read()
            self.assertTrue(why.startswith("torch.export failed: "), why)
            self.assertIn("data-dependent", why.lower())
            self.assertEqual(why.count("\n"), 1)  # one line, read into the record
            self.assertIn("benchmatrix_import: warning: torch.export failed", stderr.getvalue())


if __name__ == "__main__":
    unittest.main()


class SizeChecked(torch.nn.Module):
    """torch._check on a size: a bool in eager, a tensor under torch.jit.trace."""

    def forward(self, x):
        torch._check(x.size(0) > 0)
        return x * 2


class TraceFailureTest(unittest.TestCase):
    def test_the_reason_names_the_error_and_the_models_line(self):
        module, x = SizeChecked(), torch.randn(3)
        self.assertEqual(module(x).shape, (3,))  # eager runs it
        try:  # not assertRaises: it drops the traceback that names the line
            torch.jit.trace(module, (x,), check_trace=False, strict=False)
            self.fail("torch.jit.trace recorded a torch._check of a traced size")
        except TypeError as e:
            reason = str(untraceable("size_checked", e))
        line = SizeChecked.forward.__code__.co_firstlineno + 1  # its torch._check
        self.assertIn(f"size_checked cannot be traced by torch.jit.trace at {__file__}:{line}: "
                      "TypeError: cond must be a bool", reason)
        self.assertEqual(UNBUILDABLE, 3)  # the status the runner turns into a SKIP


# demucs' shape: its augmentation shuffles sources in groups of 4 in train mode only, so an eval
# batch of 1 (TorchBench's CPU eval batch) works in eval mode and raises in train mode.
TRAIN_ONLY_AUGMENTATION = '''
import torch
from torchbenchmark.util.model import BenchmarkModel


class Augmented(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        if self.training and x.shape[0] % 4:
            raise ValueError(f"Batch size {x.shape[0]} must be divisible by group size 4")
        return self.linear(x)


class Model(BenchmarkModel):
    DEFAULT_EVAL_BSIZE = 1
    DEFAULT_TRAIN_BSIZE = 4

    def __init__(self, test, device, batch_size=None, extra_args=[]):
        super().__init__(test=test, device=device, batch_size=batch_size, extra_args=extra_args)
        self.model = Augmented().to(device)
        self.model.train(test == "train")
        self.example_inputs = (torch.randn(self.batch_size, 4, device=device),)

    def get_module(self):
        return self.model, self.example_inputs
'''


class EvalModeTest(unittest.TestCase):
    """Every checkout model's eval is traced in eval mode, as PyTorch's harness runs inference
    (its torchbench.yaml's only_training, demucs among them, keeps train mode only in its training
    accuracy runs): demucs' eval on the H100 had failed in train mode, 2026-12-07. Its train
    program is traced in train mode."""

    def test_eval_traced_in_eval_mode_train_in_train_mode(self):
        modes = {}
        for test in ("eval", "train"):
            with tempfile.TemporaryDirectory() as work:
                checkout = checkout_with_model(work, "demucs", TRAIN_ONLY_AUGMENTATION)
                helper = run_helper_process(checkout, work, "demucs", f"--test={test}")
                self.assertEqual(helper.returncode, 0, helper.stderr[-3000:])
                with open(os.path.join(work, "result")) as f:
                    modes[test] = torch.jit.load(os.path.join(f.read(), "model.pt")).training
        self.assertEqual(modes, {"eval": False, "train": True})


# A checkout model whose state dict holds a plain value beside its tensors, as a
# quantization-aware model's holds dtypes (TorchBench's resnet50_quantized_qat), and BatchNorm
# statistics that the helper's settling forward moves.
STATE_WITH_A_DTYPE = '''
import torch
from torchbenchmark.util.model import BenchmarkModel


class WithExtraState(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 8)
        self.norm = torch.nn.BatchNorm1d(8)

    def forward(self, x):
        return self.norm(self.linear(x))

    def get_extra_state(self):
        return torch.qint8

    def set_extra_state(self, state):
        pass


class Model(BenchmarkModel):
    DEFAULT_EVAL_BSIZE = 4
    DEFAULT_TRAIN_BSIZE = 4

    def __init__(self, test, device, batch_size=None, extra_args=[]):
        super().__init__(test=test, device=device, batch_size=batch_size, extra_args=extra_args)
        self.model = WithExtraState().to(device)
        self.example_inputs = (torch.randn(self.batch_size, 16, device=device),)

    def get_module(self):
        return self.model, self.example_inputs
'''


# A checkout model whose eval takes gradients inside its forward, as TorchBench's maml does
# (torch.autograd.grad of an inner loss on a copy of its network): PyTorch's harness runs maml's
# eval with grad enabled.
GRADIENT_IN_EVAL = '''
import copy

import torch
from torchbenchmark.util.model import BenchmarkModel


class InnerStep(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 4))

    def forward(self, x):
        inner = copy.deepcopy(self.layers)  # maml fine-tunes a copy, leaving its own state alone
        (grad,) = torch.autograd.grad(inner(x).sum(), inner[0].weight)
        return x @ (inner[0].weight - 0.1 * grad).t()


class Model(BenchmarkModel):
    DEFAULT_EVAL_BSIZE = 2

    def __init__(self, test, device, batch_size=None, extra_args=[]):
        super().__init__(test=test, device=device, batch_size=batch_size, extra_args=extra_args)
        self.model = InnerStep().to(device)
        self.example_inputs = (torch.randn(self.batch_size, 4, device=device),)

    def get_module(self):
        return self.model, self.example_inputs
'''


class GradientInEvalTest(unittest.TestCase):
    """maml (PyTorch's pick_grad): its eval runs with grad enabled, so the forward works and the
    tracer says why it cannot record the inner gradient: a SKIP naming the model's line, where
    under no_grad the forward itself failed ("element 0 of tensors does not require grad", an
    ERROR record on the H100, 2026-12-06). Another model's eval keeps no_grad."""

    def import_eval(self, name):
        with tempfile.TemporaryDirectory() as work:
            checkout = checkout_with_model(work, name, GRADIENT_IN_EVAL)
            return run_helper_process(checkout, work, name, "--test=eval")

    def test_maml_is_traced_with_grad_enabled_and_skipped_naming_why(self):
        helper = self.import_eval("maml")
        self.assertEqual(helper.returncode, UNBUILDABLE, helper.stderr[-3000:])
        self.assertRegex(helper.stderr, r"maml cannot be traced by torch\.jit\.trace at "
                                        r"\S+/models/maml/__init__\.py:\d+: RuntimeError: "
                                        r"Cannot insert a Tensor that requires grad")

    def test_another_models_eval_runs_without_grad(self):
        helper = self.import_eval("inner_step")
        self.assertNotEqual(helper.returncode, 0)
        self.assertIn("does not require grad", helper.stderr)


class StateRestoreTest(unittest.TestCase):
    """The import helper runs one forward before tracing and then restores the model's state:
    the restore must take the state dict's tensors and leave its other values (a dtype) alone."""

    def test_a_state_dict_with_a_dtype_imports_with_its_statistics_restored(self):
        with tempfile.TemporaryDirectory() as work:
            checkout = checkout_with_model(work, "state_with_a_dtype", STATE_WITH_A_DTYPE)
            helper = run_helper_process(checkout, work, "state_with_a_dtype", "--test=train")
            self.assertEqual(helper.returncode, 0, helper.stderr[-3000:])
            with open(os.path.join(work, "result")) as f:
                program = torch.jit.load(os.path.join(f.read(), "model.pt"))
        statistics = {k.rsplit(".", 2)[-2] + "." + k.rsplit(".", 1)[-1]: v
                      for k, v in program.state_dict().items() if "running" in k}
        # Traced in train mode, the forward moved the running statistics (twice: the settling
        # forward and the trace); the saved program has them as they were built.
        self.assertEqual(sorted(statistics), ["norm.running_mean", "norm.running_var"],
                         list(program.state_dict()))
        self.assertTrue(torch.equal(statistics["norm.running_mean"], torch.zeros(8)))
        self.assertTrue(torch.equal(statistics["norm.running_var"], torch.ones(8)))
