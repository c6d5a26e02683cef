"""What the Python anchors of the GPU benches (bench/*_anchor.py) share about the original
runner's train step: reducing a model's output to the scalar loss the step differentiates."""


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
