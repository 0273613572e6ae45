"""ELU: y = x where x > 0, alpha * (exp(x) - 1) elsewhere; elementwise."""

TASK = {
    "tags": ["elementwise", "activation", "elu"],
    "dtype": "float32",
    "presets": {"small": {"N": 4000}, "full": {"N": 1 << 28}},
}

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1 << 28


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(x, self.alpha)


def get_inputs():
    return [2.0 * torch.randn(N)]


def get_init_inputs():
    return [1.5]
