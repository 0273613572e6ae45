"""Linear layer, average pooling over groups of POOL adjacent output features, then exact GELU:
h = x Wᵀ + b, y[m, g] = gelu((1/POOL) Σ_{t<POOL} h[m, g·POOL + t])."""

TASK = {
    "tags": ["fusion", "matmul", "pooling", "activation", "linear", "avg_pool1d", "gelu"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 40, "IN_FEATURES": 48, "OUT_FEATURES": 64, "POOL": 4},
        "full": {"BATCH": 4096, "IN_FEATURES": 4096, "OUT_FEATURES": 4096, "POOL": 4},
    },
}

import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 4096
OUT_FEATURES = 4096
POOL = 4


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, pool: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.pool = nn.AvgPool1d(kernel_size=pool)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.pool(self.linear(x).unsqueeze(1)).squeeze(1)
        return nn.functional.gelu(h)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, POOL]
