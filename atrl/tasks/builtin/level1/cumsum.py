"""Inclusive prefix sum along dim 1: y[i, j] = sum_{k <= j} x[i, k]."""

TASK = {
    "tags": ["cumulative", "cumsum"],
    "dtype": "float32",
    "presets": {"small": {"ROWS": 8, "LENGTH": 300}, "full": {"ROWS": 32768, "LENGTH": 4096}},
}

import torch
import torch.nn as nn

ROWS = 32768
LENGTH = 4096


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(ROWS, LENGTH)]


def get_init_inputs():
    return []
