"""Group norm: channels of x (batch, C, H, W) split into G groups; each (sample, group) is
normalised by its own mean and biased variance over (C/G, H, W), then y = x_hat * weight[c] + bias[c]."""

TASK = {
    "tags": ["normalization", "group_norm"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 2, "CHANNELS": 8, "GROUPS": 4, "HEIGHT": 9, "WIDTH": 7},
        "full": {"BATCH": 32, "CHANNELS": 128, "GROUPS": 32, "HEIGHT": 128, "WIDTH": 256},
    },
}

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CHANNELS = 128
GROUPS = 32
HEIGHT = 128
WIDTH = 256


class Model(nn.Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float):
        super().__init__()
        self.num_groups = num_groups
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(num_channels))
        self.bias = nn.Parameter(0.1 * torch.randn(num_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) + 0.25]


def get_init_inputs():
    return [GROUPS, CHANNELS, 1e-5]
