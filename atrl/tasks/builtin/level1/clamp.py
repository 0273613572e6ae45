"""Clamp: y = min(max(x, lo), hi), elementwise."""

TASK = {
    "tags": ["elementwise", "clamp"],
    "dtype": "float32",
    "presets": {"small": {"N": 4000}, "full": {"N": 1 << 28}},
}

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1 << 28


class Model(nn.Module):
    def __init__(self, lo: float, hi: float):
        super().__init__()
        self.lo = lo
        self.hi = hi

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, self.lo, self.hi)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return [-0.5, 0.75]
