"""Transformer MLP block: y = fc2(gelu(fc1(x))) = gelu(x W1ᵀ + b1) W2ᵀ + b2, exact (erf) GELU,
x of shape (BATCH, SEQ, DIM), hidden width HIDDEN."""

TASK = {
    "tags": ["block", "fusion", "matmul", "activation", "mlp", "linear", "gelu"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 2, "SEQ": 20, "DIM": 48, "HIDDEN": 80},
        "full": {"BATCH": 4, "SEQ": 1024, "DIM": 1024, "HIDDEN": 4096},
    },
}

import torch
import torch.nn as nn

BATCH = 4
SEQ = 1024
DIM = 1024
HIDDEN = 4096


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, HIDDEN]
