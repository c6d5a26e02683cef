"""Our C++ models against the PyTorch models TorchBench wraps (torchvision, timm, transformers, all
from PyPI): the same parameter names, shapes and count, and the same persistent buffers.

Names follow the Python state_dict, so a mismatch points at the layer that differs. Models without
a pip-installable original (llama, dlrm, BERT_pytorch, nanogpt, speech_transformer, dcgan,
LearningToPaint) are checked by their parameter counts in model_zoo_test.cpp instead.
"""
import json
import os
import subprocess
import unittest

import torch

DESCRIBE_MODEL = os.environ["DESCRIBE_MODEL"]


def torchvision_model(name):
    import torchvision
    return getattr(torchvision.models, name)(weights=None)


def timm_model(name):
    import timm
    # TorchBench's TimmModel: timm.create_model(name, in_chans=3, num_classes=None, drop_rate=0.0)
    return timm.create_model(name, pretrained=False)


def hf_bert():
    import transformers
    # TorchBench: AutoModelForMaskedLM.from_config(BertConfig())
    return transformers.BertForMaskedLM(transformers.BertConfig())


def hf_gpt2():
    import transformers
    # TorchBench: AutoModelForCausalLM.from_config(AutoConfig.from_pretrained("gpt2")); GPT2Config()
    # holds the same values (n_layer 12, n_embd 768, n_head 12, n_positions 1024, vocab 50257).
    return transformers.GPT2LMHeadModel(transformers.GPT2Config())


REFERENCES = {
    "resnet18": lambda: torchvision_model("resnet18"),
    "resnet50": lambda: torchvision_model("resnet50"),
    "mobilenet_v2": lambda: torchvision_model("mobilenet_v2"),
    "mobilenet_v3_large": lambda: torchvision_model("mobilenet_v3_large"),
    "alexnet": lambda: torchvision_model("alexnet"),
    "vgg16": lambda: torchvision_model("vgg16"),
    "densenet121": lambda: torchvision_model("densenet121"),
    "squeezenet1_1": lambda: torchvision_model("squeezenet1_1"),
    "shufflenet_v2_x1_0": lambda: torchvision_model("shufflenet_v2_x1_0"),
    "timm_vision_transformer": lambda: timm_model("vit_small_patch16_224"),
    "timm_efficientnet": lambda: timm_model("efficientnet_b0"),
    "hf_Bert": hf_bert,
    "hf_GPT2": hf_gpt2,
}


def ours(model):
    out = subprocess.run([DESCRIBE_MODEL, "torchbench", model], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"describe_model {model} failed: {out.stderr}")
    return json.loads(out.stdout)


def theirs(module):
    parameters = {name: list(p.shape) for name, p in module.named_parameters()}
    state = module.state_dict()
    buffers = {name: list(b.shape) for name, b in module.named_buffers() if name in state}
    return {"parameters": parameters, "buffers": buffers}


class ReferenceArchitectures(unittest.TestCase):
    def test_models_match_their_python_originals(self):
        torch.manual_seed(0)
        for model, reference in REFERENCES.items():
            with self.subTest(model=model):
                expected = theirs(reference())
                actual = ours(model)
                self.assertEqual(actual["parameters"], expected["parameters"])
                self.assertEqual(sum(map(_numel, actual["parameters"].values())),
                                 sum(map(_numel, expected["parameters"].values())))
                # Persistent buffers (BN running stats and counters); ours may hold extra
                # non-persistent ones, which the state_dict would not show.
                for name, shape in expected["buffers"].items():
                    self.assertEqual(actual["buffers"].get(name), shape, f"buffer {name}")


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


if __name__ == "__main__":
    unittest.main()
