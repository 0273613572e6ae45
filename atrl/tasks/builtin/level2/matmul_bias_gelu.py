"""Linear layer followed by exact GELU: y = gelu(x Wᵀ + b), gelu(z) = z · Φ(z) = ½ z (1 + erf(z / √2))."""

TASK = {
    "tags": ["fusion", "matmul", "activation", "linear", "gelu"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 40, "IN_FEATURES": 48, "OUT_FEATURES": 36},
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
        self.gelu = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
