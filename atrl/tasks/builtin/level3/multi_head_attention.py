"""Multi-head self-attention layer: per head h, a_h = softmax(q_h k_hᵀ / √d) v_h (no mask) with
q = x Wqᵀ + bq (likewise k, v) split into HEADS heads of size d = DIM / HEADS; the heads are
concatenated and projected, y = concat(a_h) Woᵀ + bo; x of shape (BATCH, SEQ, DIM)."""

TASK = {
    "tags": ["block", "attention", "matmul", "softmax", "linear", "self_attention", "multi_head"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 2, "SEQ": 24, "DIM": 32, "HEADS": 2},
        "full": {"BATCH": 16, "SEQ": 1024, "DIM": 1024, "HEADS": 16},
    },
}

import math

import torch
import torch.nn as nn

BATCH = 16
SEQ = 1024
DIM = 1024
HEADS = 16


class Model(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        head_dim = dim // self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(batch, seq, self.heads, head_dim).transpose(1, 2)

        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(head_dim), dim=-1)
        attended = (weights @ v).transpose(1, 2).reshape(batch, seq, dim)
        return self.o_proj(attended)


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, HEADS]
