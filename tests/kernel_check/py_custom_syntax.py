# Does not load: a syntax error (what a failed compile is for Python sources).
import torch

class ModelNew(torch.nn.Module)
    pass
