"""SwiGLU projection: y = silu(x W1ᵀ) ⊙ (x W3ᵀ), silu(t) = t · σ(t), both projections without bias."""

TASK = {
    "tags": ["fusion", "matmul", "activation", "linear", "swiglu", "silu"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 40, "IN_FEATURES": 48, "HIDDEN": 56},
        "full": {"BATCH": 4096, "IN_FEATURES": 4096, "HIDDEN": 4096},
    },
}

import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 4096
HIDDEN = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(in_features, hidden, bias=False)
        self.w3 = nn.Linear(in_features, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.silu(self.w1(x)) * self.w3(x)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN]
