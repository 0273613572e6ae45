"""Attention pooling without dropout: weights p = softmax(s) over the sequence, then the weighted sum
of values, y[b, d] = Σ_l p[b, l] · v[b, l, d]; s of shape (BATCH, SEQ), v of shape (BATCH, SEQ, DIM)."""

TASK = {
    "tags": ["fusion", "softmax", "reduction", "attention", "weighted_sum"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 3, "SEQ": 50, "DIM": 24},
        "full": {"BATCH": 64, "SEQ": 4096, "DIM": 1024},
    },
}

import torch
import torch.nn as nn

BATCH = 64
SEQ = 4096
DIM = 1024


class Model(nn.Module):
    def forward(self, scores: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        weights = torch.softmax(scores, dim=-1)
        return (weights.unsqueeze(-1) * values).sum(dim=1)


def get_inputs():
    return [torch.randn(BATCH, SEQ), torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return []
