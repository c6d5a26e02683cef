# A correct candidate: the same computation written differently (same parameter creation order).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.w = nn.Parameter(torch.randn(features))

    def forward(self, x, y):
        z = torch.addcmul(y, x, self.w)
        return z, torch.einsum("ij->i", z)
