"""Linear layer, residual add, then layer norm over the last dimension:
y = LayerNorm(x Wᵀ + b + r), LayerNorm(h) = (h − mean(h)) / √(var(h) + ε) · γ + β (biased variance)."""

TASK = {
    "tags": ["fusion", "matmul", "normalization", "linear", "residual", "layer_norm"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 24, "IN_FEATURES": 40, "HIDDEN": 72},
        "full": {"BATCH": 8192, "IN_FEATURES": 4096, "HIDDEN": 2048},
    },
}

import torch
import torch.nn as nn

BATCH = 8192
IN_FEATURES = 4096
HIDDEN = 2048
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, in_features: int, hidden: int):
        super().__init__()
        self.linear = nn.Linear(in_features, hidden)
        self.norm = nn.LayerNorm(hidden, eps=EPS)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(self.linear(x) + residual)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES), torch.randn(BATCH, HIDDEN)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN]
