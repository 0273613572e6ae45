"""Elementwise chain: exact GELU, scaling, clamping: y = clamp(SCALE · gelu(x), CLAMP_MIN, CLAMP_MAX)."""

TASK = {
    "tags": ["fusion", "activation", "elementwise", "gelu", "scale", "clamp"],
    "dtype": "float32",
    "presets": {
        "small": {"ROWS": 16, "COLS": 300},
        "full": {"ROWS": 32768, "COLS": 8192},
    },
}

import torch
import torch.nn as nn

ROWS = 32768
COLS = 8192
SCALE = 1.5
CLAMP_MIN = -0.1
CLAMP_MAX = 2.0


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(nn.functional.gelu(x) * SCALE, min=CLAMP_MIN, max=CLAMP_MAX)


def get_inputs():
    return [2.0 * torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
