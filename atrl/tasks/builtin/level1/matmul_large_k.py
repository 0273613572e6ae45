"""Rectangular matrix multiply with a long inner dimension: C = A @ B, A (M, K), B (K, N), K >> M, N."""

TASK = {
    "tags": ["matmul", "matmul_large_k"],
    "dtype": "float32",
    # Each output sums K products, so |C| ~ sqrt(K) and two correct fp32 summation orders differ by
    # ~1e-3 in absolute terms at K = 2^18; the default atol (1e-4) would fail entries of C near zero.
    "atol": 1e-2,
    "presets": {"small": {"M": 32, "N": 40, "K": 2000}, "full": {"M": 256, "N": 256, "K": 1 << 18}},
}

import torch
import torch.nn as nn

M = 256
N = 256
K = 1 << 18


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
