"""Gather along dim 1: out[i, j] = x[i, index[i, j]] (torch.gather), index int64 of shape (ROWS, PICKS)."""

TASK = {
    "tags": ["gather", "gather_dim"],
    "dtype": "float32",
    "presets": {"small": {"ROWS": 16, "COLS": 200, "PICKS": 70}, "full": {"ROWS": 32768, "COLS": 4096, "PICKS": 4096}},
}

import torch
import torch.nn as nn

ROWS = 32768
COLS = 4096
PICKS = 4096


class Model(nn.Module):
    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, 1, index)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randint(0, COLS, (ROWS, PICKS), dtype=torch.int64)]


def get_init_inputs():
    return []
