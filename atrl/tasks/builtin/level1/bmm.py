"""Batched matrix multiply: C[b] = A[b] @ B[b], A of shape (BATCH, M, K), B of shape (BATCH, K, N)."""

TASK = {
    "tags": ["matmul", "bmm"],
    "dtype": "float32",
    "presets": {"small": {"BATCH": 3, "M": 40, "N": 36, "K": 50}, "full": {"BATCH": 32, "M": 1024, "N": 1024, "K": 1024}},
}

import torch
import torch.nn as nn

BATCH = 32
M = 1024
N = 1024
K = 1024


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []
