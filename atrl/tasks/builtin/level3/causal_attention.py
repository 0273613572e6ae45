"""Causal attention core: y = softmax(Q Kᵀ / √d + M) V with M[i, j] = −∞ for j > i and 0 otherwise;
q, k, v of shape (BATCH, HEADS, SEQ, HEAD_DIM), d = HEAD_DIM."""

TASK = {
    "tags": ["block", "attention", "softmax", "matmul", "causal_mask"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 1, "HEADS": 2, "SEQ": 40, "HEAD_DIM": 16},
        "full": {"BATCH": 8, "HEADS": 16, "SEQ": 1024, "HEAD_DIM": 64},
    },
}

import math

import torch
import torch.nn as nn

BATCH = 8
HEADS = 16
SEQ = 1024
HEAD_DIM = 64


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        seq, head_dim = q.shape[-2], q.shape[-1]
        scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim)
        future = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=q.device), diagonal=1)
        return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, HEAD_DIM) for _ in range(3)]


def get_init_inputs():
    return []
