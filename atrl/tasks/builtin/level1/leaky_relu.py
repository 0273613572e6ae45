"""Leaky ReLU: y = x where x >= 0, negative_slope * x elsewhere; elementwise."""

TASK = {
    "tags": ["elementwise", "activation", "leaky_relu"],
    "dtype": "float32",
    "presets": {"small": {"N": 4000}, "full": {"N": 1 << 28}},
}

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1 << 28


class Model(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, self.negative_slope)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return [0.01]
