"""Max over one dimension: y = x.max(dim).values for a 3-D x (values only)."""

TASK = {
    "tags": ["reduction", "max_dim"],
    "dtype": "float32",
    "presets": {"small": {"BATCH": 3, "DIM1": 70, "DIM2": 50}, "full": {"BATCH": 16, "DIM1": 4096, "DIM2": 4096}},
}

import torch
import torch.nn as nn

BATCH = 16
DIM1 = 4096
DIM2 = 4096


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.max(x, dim=self.dim).values


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [2]
