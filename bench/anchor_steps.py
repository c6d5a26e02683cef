"""What the Python anchors of the GPU benches (bench/*_anchor.py) share about the original
runner's train step: reducing a model's output to the scalar loss the step differentiates, which
models train with SGD, and the pip originals of the TorchBench zoo's models."""

# TRAIN_WITH_SGD of PyTorch/XLA's torchbench_model.py, as backends/eager_backend.cpp
# trains_with_sgd lists it (our models among them); the others train with Adam. Both lr 0.01.
TRAIN_WITH_SGD = frozenset({
    "BERT_pytorch", "LearningToPaint", "alexnet", "dcgan", "demucs", "densenet121", "dlrm",
    "fastNLP_Bert", "mobilenet_v2", "phlippe_densenet", "phlippe_resnet", "pytorch_stargan",
    "resnet18", "shufflenet_v2_x1_0", "speech_transformer", "squeezenet1_1",
    "stable_diffusion_text_encoder", "timm_efficientdet", "timm_nfnet", "timm_regnet",
    "timm_vision_transformer", "timm_vovnet", "vgg16", "hf_T5", "llama_v2_7b_16h"})

# The pip originals of our zoo's models: torchvision constructors by name, timm model names, and
# transformers (model class, config class, vocabulary size). TorchBench's hf_GPT2 and hf_Bert train
# inputs are [batch, 512] token ids.
TORCHVISION = {name: name for name in (
    "resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "densenet121", "vgg16",
    "alexnet", "squeezenet1_1", "shufflenet_v2_x1_0")}
TIMM = {"timm_vision_transformer": "vit_small_patch16_224", "timm_efficientnet": "efficientnet_b0"}
TRANSFORMERS = {"hf_GPT2": ("GPT2LMHeadModel", "GPT2Config", 50257),
                "hf_Bert": ("BertForMaskedLM", "BertConfig", 30522)}
TRAIN_SEQUENCE_LENGTH = 512


def reduce_to_scalar_loss(out):
    """The original runner's loss: the mean of a tensor; of a list, tuple or dict, the mean of its
    elements' losses; a transformers ModelOutput without a loss, its logits'."""
    import torch
    if isinstance(out, torch.Tensor):
        return out.sum() / out.numel()
    if isinstance(out, (list, tuple)):
        return sum(reduce_to_scalar_loss(x) for x in out) / len(out)
    if isinstance(out, dict):
        return sum(reduce_to_scalar_loss(v) for v in out.values()) / len(out)
    if hasattr(out, "logits"):  # a transformers ModelOutput without loss
        return reduce_to_scalar_loss(out.logits)
    raise TypeError(f"cannot reduce {type(out)}")


def has_pip_original(name):
    return name in TORCHVISION or name in TIMM or name in TRANSFORMERS


def pip_original_name(name):
    """Where the pip original of `name` comes from, e.g. "torchvision.models.resnet50()"."""
    if name in TORCHVISION:
        return f"torchvision.models.{TORCHVISION[name]}()"
    if name in TIMM:
        return f"timm.create_model({TIMM[name]!r})"
    model_class, config_class, _ = TRANSFORMERS[name]
    return f"transformers.{model_class}({config_class}()), logits only"


def pip_original(name, batch):
    """The pip original of `name` (randomly initialised, on the CPU) and its inputs at `batch`:
    [batch, 3, 224, 224] images, or [batch, 512] token ids for the transformers, whose model is
    wrapped to return its logits (what our port returns; the step reduces them)."""
    import torch
    if name in TORCHVISION:
        import torchvision
        return getattr(torchvision.models, TORCHVISION[name])(), (torch.randn(batch, 3, 224, 224),)
    if name in TIMM:
        import timm
        return timm.create_model(TIMM[name], pretrained=False), (torch.randn(batch, 3, 224, 224),)
    import transformers

    class Logits(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids):
            return self.model(input_ids=input_ids).logits

    model_class, config_class, vocabulary = TRANSFORMERS[name]
    config = getattr(transformers, config_class)()
    config.use_cache = False  # the step needs the logits only, as our port returns
    model = Logits(getattr(transformers, model_class)(config))
    return model, (torch.randint(0, vocabulary, (batch, TRAIN_SEQUENCE_LENGTH)),)
