"""2-D transpose materialised in memory: y[j, i] = x[i, j], y contiguous of shape (COLS, ROWS)."""

TASK = {
    "tags": ["layout", "transpose"],
    "dtype": "float32",
    "presets": {"small": {"ROWS": 50, "COLS": 70}, "full": {"ROWS": 8192, "COLS": 32768}},
}

import torch
import torch.nn as nn

ROWS = 8192
COLS = 32768


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(0, 1).contiguous()


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
