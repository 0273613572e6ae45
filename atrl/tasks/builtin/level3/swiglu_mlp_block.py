"""Pre-norm gated MLP block with residual: n = x / √(mean(x²) + ε) · g (RMS norm over DIM),
y = x + (silu(n W1ᵀ) ⊙ (n W3ᵀ)) W2ᵀ, silu(t) = t · σ(t), projections without bias;
x of shape (BATCH, SEQ, DIM), hidden width HIDDEN."""

TASK = {
    "tags": ["block", "fusion", "matmul", "normalization", "activation", "mlp", "swiglu", "rms_norm",
             "residual"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 2, "SEQ": 20, "DIM": 48, "HIDDEN": 64},
        "full": {"BATCH": 4, "SEQ": 1024, "DIM": 2048, "HIDDEN": 5632},
    },
}

import torch
import torch.nn as nn

BATCH = 4
SEQ = 1024
DIM = 2048
HIDDEN = 5632
EPS = 1e-6


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        # a non-trivial gain, so that a candidate that drops it is wrong
        self.norm_weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * self.norm_weight
        return x + self.w2(nn.functional.silu(self.w1(n)) * self.w3(n))


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, HIDDEN]
