"""Scaled multiply-add (BLAS axpy): z = alpha * x + y, elementwise, alpha a constructor argument."""

TASK = {
    "tags": ["elementwise", "axpy"],
    "dtype": "float32",
    "presets": {"small": {"N": 4000}, "full": {"N": 1 << 28}},
}

import torch
import torch.nn as nn

N = 1 << 28


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.add(y, x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return [-2.5]
