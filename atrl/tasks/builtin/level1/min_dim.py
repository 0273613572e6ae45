"""Min over the leading dimension: y = x.amin(0) for a 3-D x."""

TASK = {
    "tags": ["reduction", "min_dim"],
    "dtype": "float32",
    "presets": {"small": {"DIM0": 40, "DIM1": 6, "DIM2": 33}, "full": {"DIM0": 4096, "DIM1": 256, "DIM2": 256}},
}

import torch
import torch.nn as nn

DIM0 = 4096
DIM1 = 256
DIM2 = 256


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amin(x, dim=0)


def get_inputs():
    return [torch.randn(DIM0, DIM1, DIM2)]


def get_init_inputs():
    return []
