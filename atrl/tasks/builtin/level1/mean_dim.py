"""Mean over the last dimension: y = x.mean(-1) for a 3-D x."""

TASK = {
    "tags": ["reduction", "mean_dim"],
    "dtype": "float32",
    "presets": {"small": {"BATCH": 4, "DIM1": 20, "DIM2": 300}, "full": {"BATCH": 64, "DIM1": 1024, "DIM2": 4096}},
}

import torch
import torch.nn as nn

BATCH = 64
DIM1 = 1024
DIM2 = 4096


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return []
