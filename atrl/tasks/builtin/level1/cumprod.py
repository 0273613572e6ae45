"""Inclusive prefix product along dim 1: y[i, j] = prod_{k <= j} x[i, k]."""

TASK = {
    "tags": ["cumulative", "cumprod"],
    "dtype": "float32",
    # The j-th output carries j roundings, so at LENGTH = 4096 two correct fp32 multiplication orders
    # (sequential vs. a tree scan) differ by up to ~1e-4 relative; the default rtol/bound are too tight.
    "rtol": 1e-3,
    "precision_bound": 1e-4,
    "presets": {"small": {"ROWS": 8, "LENGTH": 300}, "full": {"ROWS": 32768, "LENGTH": 4096}},
}

import torch
import torch.nn as nn

ROWS = 32768
LENGTH = 4096


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=1)


def get_inputs():
    # Factors near +-1 keep the running products inside the fp32 range over thousands of steps;
    # the random sign exercises both signs.
    magnitude = 1.0 + 0.1 * torch.randn(ROWS, LENGTH)
    sign = torch.randint(0, 2, (ROWS, LENGTH)) * 2 - 1
    return [magnitude * sign]


def get_init_inputs():
    return []
