"""Log-softmax over the last dimension: y[i, j] = x[i, j] - max_k x[i, k] - log(sum_k exp(x[i, k] - max_k x[i, k]))."""

TASK = {
    "tags": ["softmax", "log_softmax"],
    "dtype": "float32",
    "presets": {"small": {"ROWS": 24, "COLS": 300}, "full": {"ROWS": 65536, "COLS": 4096}},
}

import torch
import torch.nn as nn

ROWS = 65536
COLS = 4096


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [3.0 * torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
