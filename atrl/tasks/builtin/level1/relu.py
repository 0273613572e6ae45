"""ReLU: y = max(x, 0), elementwise over a 1-D tensor."""

TASK = {
    "tags": ["elementwise", "activation", "relu"],
    "dtype": "float32",
    "presets": {"small": {"N": 4096}, "full": {"N": 1 << 26}},
}

import torch
import torch.nn as nn

N = 1 << 26


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
