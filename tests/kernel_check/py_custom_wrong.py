# A wrong candidate: the first output is right, the second is off by exactly 0.25.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.w = nn.Parameter(torch.randn(features))

    def forward(self, x, y):
        z = x * self.w + y
        return z, z.sum(dim=-1) + 0.25
