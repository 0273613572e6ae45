"""GELU, tanh approximation: y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), elementwise."""

TASK = {
    "tags": ["elementwise", "activation", "gelu_tanh"],
    "dtype": "float32",
    "presets": {"small": {"N": 4000}, "full": {"N": 1 << 28}},
}

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1 << 28


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [3.0 * torch.randn(N)]


def get_init_inputs():
    return []
