"""Matrix-vector product: y = A @ x, A of shape (M, K), x of shape (K,), y of shape (M,)."""

TASK = {
    "tags": ["matmul", "matvec"],
    "dtype": "float32",
    "presets": {"small": {"M": 70, "K": 300}, "full": {"M": 16384, "K": 16384}},
}

import torch
import torch.nn as nn

M = 16384
K = 16384


class Model(nn.Module):
    def forward(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, x)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K)]


def get_init_inputs():
    return []
