"""Add: z = x + y, elementwise over two tensors of the same shape."""

TASK = {
    "tags": ["elementwise", "add"],
    "dtype": "float32",
    "presets": {"small": {"ROWS": 30, "COLS": 130}, "full": {"ROWS": 16384, "COLS": 16384}},
}

import torch
import torch.nn as nn

ROWS = 16384
COLS = 16384


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
