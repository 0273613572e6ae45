"""ReLU under the partial compute policy: y = max(x, 0) elementwise over a 2-D tensor. The
static PyTorch-compute rule is off here, so only the recorded data path stands between PyTorch
compute and an accepted verdict."""

TASK = {
    "tags": ["elementwise", "activation", "relu"],
    "dtype": "float32",
    "compute_policy": "partial",
    "presets": {"small": {"ROWS": 16, "COLS": 256}, "full": {"ROWS": 4096, "COLS": 16384}},
}

import torch
import torch.nn as nn

ROWS = 4096
COLS = 16384


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
