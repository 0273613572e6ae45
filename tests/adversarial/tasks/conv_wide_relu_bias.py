"""The chain of conv_relu_bias.py (3×3 convolution with its bias, no padding, ReLU, then a
per-channel bias added) with more input than output channels, so that the convolution moves most
of the reference's bytes: under the partial policy a candidate keeps it in PyTorch only through the
library exemption. x of shape (BATCH, IN_CHANNELS, HEIGHT, WIDTH), bias of shape (OUT_CHANNELS, 1, 1)."""

TASK = {
    "tags": ["conv", "conv2d", "activation", "relu", "bias"],
    "dtype": "float32",
    "compute_policy": "partial",
    "presets": {
        "small": {"BATCH": 2, "IN_CHANNELS": 32, "OUT_CHANNELS": 8, "HEIGHT": 12, "WIDTH": 10},
        "full": {"BATCH": 128, "IN_CHANNELS": 32, "OUT_CHANNELS": 8, "HEIGHT": 128, "WIDTH": 128},
    },
}

import torch
import torch.nn as nn

BATCH = 128
IN_CHANNELS = 32
OUT_CHANNELS = 8
HEIGHT = 128
WIDTH = 128


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)) + self.bias


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
