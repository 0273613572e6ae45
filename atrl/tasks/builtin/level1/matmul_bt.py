"""Matrix multiply with the second operand transposed: C = A @ B^T, A of shape (M, K), B of shape (N, K)."""

TASK = {
    "tags": ["matmul", "matmul_bt"],
    "dtype": "float32",
    "presets": {"small": {"M": 40, "N": 56, "K": 72}, "full": {"M": 4096, "N": 4096, "K": 4096}},
}

import torch
import torch.nn as nn

M = 4096
N = 4096
K = 4096


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b.T)


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K)]


def get_init_inputs():
    return []
