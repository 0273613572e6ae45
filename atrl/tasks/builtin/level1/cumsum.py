"""Inclusive prefix sum along dim 1: y[i, j] = sum_{k <= j} x[i, k]."""

TASK = {
    "tags": ["cumulative", "cumsum"],
    "dtype": "float32",
    # The j-th prefix sum carries j roundings of partial sums of size ~sqrt(j), so at LENGTH = 4096
    # two correct fp32 summation orders differ by up to ~3e-4 where the prefix sum is near zero.
    "atol": 2e-3,
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
