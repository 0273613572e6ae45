"""Convolutional block: two rounds of 3×3 convolution ("same" padding, with bias), group norm
(GROUPS groups, affine) and ReLU, then 2×2 max pooling with stride 2;
x of shape (BATCH, IN_CHANNELS, HEIGHT, WIDTH), output (BATCH, OUT_CHANNELS, HEIGHT/2, WIDTH/2)."""

TASK = {
    "tags": ["block", "conv", "normalization", "activation", "pooling", "conv2d", "group_norm", "relu",
             "max_pool2d"],
    "dtype": "float32",
    # PyTorch may compute the convolutions; the normalisation, activation and pooling are for Triton
    "compute_policy": "partial",
    "presets": {
        "small": {"BATCH": 2, "IN_CHANNELS": 3, "OUT_CHANNELS": 8, "HEIGHT": 8, "WIDTH": 10, "GROUPS": 4},
        "full": {"BATCH": 16, "IN_CHANNELS": 64, "OUT_CHANNELS": 128, "HEIGHT": 128, "WIDTH": 128,
                 "GROUPS": 8},
    },
}

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 128
WIDTH = 128
GROUPS = 8


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, groups: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm1 = nn.GroupNorm(groups, out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.norm2 = nn.GroupNorm(groups, out_channels)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.norm1(self.conv1(x)))
        h = torch.relu(self.norm2(self.conv2(h)))
        return self.pool(h)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, GROUPS]
