"""Pre-norm transformer block with causal multi-head self-attention and a GELU MLP:
h = x + Attn(LN1(x)), y = h + W2 gelu(W1 LN2(h) + b1) + b2, where Attn projects to q, k, v (with
bias), splits HEADS heads, applies softmax(q kᵀ / √d + causal mask) v per head and projects the
concatenated heads back; LN is layer norm with affine parameters; x of shape (BATCH, SEQ, DIM)."""

TASK = {
    "tags": ["block", "attention", "normalization", "matmul", "softmax", "activation", "transformer",
             "layer_norm", "causal_mask", "mlp", "residual"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 1, "SEQ": 16, "DIM": 32, "HEADS": 2, "MLP_RATIO": 2},
        "full": {"BATCH": 8, "SEQ": 1024, "DIM": 1024, "HEADS": 16, "MLP_RATIO": 4},
    },
}

import math

import torch
import torch.nn as nn

BATCH = 8
SEQ = 1024
DIM = 1024
HEADS = 16
MLP_RATIO = 4
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim, eps=EPS)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim, eps=EPS)
        self.fc1 = nn.Linear(dim, mlp_ratio * dim)
        self.fc2 = nn.Linear(mlp_ratio * dim, dim)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        head_dim = dim // self.heads
        q, k, v = self.qkv(x).view(batch, seq, 3, self.heads, head_dim).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim)
        future = torch.triu(torch.ones(seq, seq, dtype=torch.bool, device=x.device), diagonal=1)
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(batch, seq, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attention(self.norm1(x))
        return h + self.fc2(nn.functional.gelu(self.fc1(self.norm2(h))))


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, HEADS, MLP_RATIO]
