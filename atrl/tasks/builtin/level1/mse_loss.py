"""Mean squared error: loss = mean((pred - target)^2) over all elements; a 0-d tensor."""

TASK = {
    "tags": ["loss", "mse_loss"],
    "dtype": "float32",
    "presets": {"small": {"N": 5000}, "full": {"N": 1 << 28}},
}

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1 << 28


class Model(nn.Module):
    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(pred, target)


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
