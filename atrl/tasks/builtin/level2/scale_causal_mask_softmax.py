"""Scaled, causally masked softmax of attention scores s of shape (BATCH, HEADS, SEQ, SEQ):
y[..., i, j] = exp(c·s_ij) / Σ_{j' ≤ i} exp(c·s_ij') for j ≤ i and 0 for j > i, with c = 1/√HEAD_DIM."""

TASK = {
    "tags": ["fusion", "softmax", "attention", "scale", "causal_mask"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 2, "HEADS": 2, "SEQ": 24, "HEAD_DIM": 16},
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
    def __init__(self, head_dim: int):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        seq = scores.shape[-1]
        future = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=scores.device), diagonal=1)
        return torch.softmax((scores * self.scale).masked_fill(future, float("-inf")), dim=-1)


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, SEQ)]


def get_init_inputs():
    return [HEAD_DIM]
