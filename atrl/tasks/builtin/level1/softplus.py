"""Softplus: y = log(1 + exp(x)), elementwise (PyTorch returns x itself where x > 20)."""

TASK = {
    "tags": ["elementwise", "activation", "softplus"],
    "dtype": "float32",
    "presets": {"small": {"N": 4000}, "full": {"N": 1 << 28}},
}

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1 << 28


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x)


def get_inputs():
    return [5.0 * torch.randn(N)]


def get_init_inputs():
    return []
