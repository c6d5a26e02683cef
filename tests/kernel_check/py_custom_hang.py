# Never returns from forward: run_and_check's --timeout must stop it.
import time

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()

    def forward(self, x, y):
        while True:
            time.sleep(1)
