"""Layer norm over the features, then a linear layer:
x̂ = (x − mean(x)) / √(var(x) + ε) · γ + β (biased variance), y = x̂ Wᵀ + b."""

TASK = {
    "tags": ["fusion", "normalization", "matmul", "layer_norm", "linear"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 36, "IN_FEATURES": 56, "OUT_FEATURES": 40},
        "full": {"BATCH": 4096, "IN_FEATURES": 4096, "OUT_FEATURES": 4096},
    },
}

import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 4096
OUT_FEATURES = 4096
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.norm = nn.LayerNorm(in_features, eps=EPS)
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.norm(x))


def get_inputs():
    return [3.0 + torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
