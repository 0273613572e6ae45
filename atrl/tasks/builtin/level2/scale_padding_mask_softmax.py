"""Scaled softmax of attention scores s of shape (BATCH, HEADS, QUERIES, KEYS) with key padding:
keys j ≥ lengths[b] are masked out, y[b, h, i, j] = exp(c·s_bhij) / Σ_{j' < len_b} exp(c·s_bhij') for
j < len_b and 0 otherwise; c = 1/√HEAD_DIM and every sequence keeps at least one key."""

TASK = {
    "tags": ["fusion", "softmax", "attention", "scale", "padding_mask"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 3, "HEADS": 2, "QUERIES": 8, "KEYS": 40, "HEAD_DIM": 16},
        "full": {"BATCH": 16, "HEADS": 16, "QUERIES": 512, "KEYS": 1024, "HEAD_DIM": 64},
    },
}

import math

import torch
import torch.nn as nn

BATCH = 16
HEADS = 16
QUERIES = 512
KEYS = 1024
HEAD_DIM = 64


class Model(nn.Module):
    def __init__(self, head_dim: int):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, scores: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        keys = torch.arange(scores.shape[-1], device=scores.device)
        padding = (keys[None, :] >= lengths[:, None])[:, None, None, :]
        return torch.softmax((scores * self.scale).masked_fill(padding, float("-inf")), dim=-1)


def get_inputs():
    return [torch.randn(BATCH, HEADS, QUERIES, KEYS), torch.randint(1, KEYS + 1, (BATCH,))]


def get_init_inputs():
    return [HEAD_DIM]
