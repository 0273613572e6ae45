"""Sigmoid: y = 1 / (1 + exp(-x)), elementwise."""

TASK = {
    "tags": ["elementwise", "activation", "sigmoid"],
    "dtype": "float32",
    "presets": {"small": {"N": 4000}, "full": {"N": 1 << 28}},
}

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1 << 28


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


def get_inputs():
    return [4.0 * torch.randn(N)]


def get_init_inputs():
    return []
