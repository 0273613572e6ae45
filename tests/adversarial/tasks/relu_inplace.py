"""In-place ReLU: x = max(x, 0) elementwise over a 1-D tensor, written into x, which is returned."""

TASK = {
    "tags": ["elementwise", "activation", "relu", "inplace"],
    "dtype": "float32",
    "reference_mutates_inputs": True,
    "presets": {"small": {"N": 4096}, "full": {"N": 1 << 26}},
}

import torch
import torch.nn as nn

N = 1 << 26


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch.relu_(x)
        return x


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
