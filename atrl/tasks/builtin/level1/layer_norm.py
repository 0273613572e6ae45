"""Layer norm over the last dimension with an affine transform:
y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias, mean and biased variance per row."""

TASK = {
    "tags": ["normalization", "layer_norm"],
    "dtype": "float32",
    "presets": {"small": {"ROWS": 24, "DIM": 300}, "full": {"ROWS": 65536, "DIM": 4096}},
}

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 65536
DIM = 4096


class Model(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))
        self.bias = nn.Parameter(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)


def get_inputs():
    return [2.0 * torch.randn(ROWS, DIM) + 0.5]


def get_init_inputs():
    return [DIM, 1e-5]
