"""Single-head self-attention layer with projections: q = x Wqᵀ + bq, k = x Wkᵀ + bk, v = x Wvᵀ + bv,
a = softmax(q kᵀ / √DIM) v (no mask), y = a Woᵀ + bo; x of shape (BATCH, SEQ, DIM)."""

TASK = {
    "tags": ["block", "attention", "matmul", "softmax", "linear", "self_attention"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 2, "SEQ": 24, "DIM": 32},
        "full": {"BATCH": 16, "SEQ": 1024, "DIM": 1024},
    },
}

import math

import torch
import torch.nn as nn

BATCH = 16
SEQ = 1024
DIM = 1024


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return self.o_proj(weights @ v)


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM]
