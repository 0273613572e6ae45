"""Linear layer, then the sum over its output features: y[m] = Σ_n (x Wᵀ + b)[m, n], shape (BATCH, 1)."""

TASK = {
    "tags": ["fusion", "matmul", "reduction", "linear", "sum"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 40, "IN_FEATURES": 48, "OUT_FEATURES": 72},
        "full": {"BATCH": 4096, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    },
}

import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 4096
OUT_FEATURES = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x).sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
