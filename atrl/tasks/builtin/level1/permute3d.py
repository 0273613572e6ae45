"""3-D permute materialised in memory: y[k, i, j] = x[i, j, k] (x.permute(2, 0, 1), contiguous)."""

TASK = {
    "tags": ["layout", "permute3d"],
    "dtype": "float32",
    "presets": {"small": {"DIM0": 6, "DIM1": 10, "DIM2": 12}, "full": {"DIM0": 256, "DIM1": 1024, "DIM2": 1024}},
}

import torch
import torch.nn as nn

DIM0 = 256
DIM1 = 1024
DIM2 = 1024


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(2, 0, 1).contiguous()


def get_inputs():
    return [torch.randn(DIM0, DIM1, DIM2)]


def get_init_inputs():
    return []
