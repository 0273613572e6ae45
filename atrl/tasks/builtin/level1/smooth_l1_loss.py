"""Smooth L1 (Huber-like) loss, mean over all elements: with d = pred - target,
l = 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere; loss = mean(l), a 0-d tensor."""

TASK = {
    "tags": ["loss", "smooth_l1_loss"],
    "dtype": "float32",
    "presets": {"small": {"N": 5000}, "full": {"N": 1 << 28}},
}

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1 << 28


class Model(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(pred, target, beta=self.beta)


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return [0.5]
