"""RMS norm over the last dimension: y = x / sqrt(mean(x^2) + eps) * weight, per row."""

TASK = {
    "tags": ["normalization", "rms_norm"],
    "dtype": "float32",
    "presets": {"small": {"ROWS": 24, "DIM": 300}, "full": {"ROWS": 65536, "DIM": 4096}},
}

import torch
import torch.nn as nn

ROWS = 65536
DIM = 4096


class Model(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    return [torch.randn(ROWS, DIM)]


def get_init_inputs():
    return [DIM, 1e-6]
