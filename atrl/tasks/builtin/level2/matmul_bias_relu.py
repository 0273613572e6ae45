"""Linear layer followed by ReLU: y = max(x Wᵀ + b, 0), x of shape (BATCH, IN_FEATURES)."""

TASK = {
    "tags": ["fusion", "matmul", "activation", "linear", "relu"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 48, "IN_FEATURES": 40, "OUT_FEATURES": 56},
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
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
