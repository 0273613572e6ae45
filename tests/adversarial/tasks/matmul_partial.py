"""Square matrix multiply under the partial compute policy: C = A @ B with A, B of shape (N, N)."""

TASK = {
    "tags": ["matmul", "square_matmul"],
    "dtype": "float32",
    "compute_policy": "partial",
    "presets": {"small": {"N": 48}, "full": {"N": 4096}},
}

import torch
import torch.nn as nn

N = 4096


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
