"""L2 norm of each row: y[i] = sqrt(sum_j x[i, j]^2) for a 2-D x."""

TASK = {
    "tags": ["reduction", "l2_norm"],
    "dtype": "float32",
    "presets": {"small": {"ROWS": 24, "COLS": 300}, "full": {"ROWS": 65536, "COLS": 4096}},
}

import torch
import torch.nn as nn

ROWS = 65536
COLS = 4096


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(x, ord=2, dim=1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
