"""2-D convolution (stride 1, "same" zero padding) with bias, then ReLU:
y[n, o, i, j] = max(b[o] + Σ_{c, u, v} w[o, c, u, v] · x[n, c, i + u − P, j + v − P], 0), P = KERNEL // 2."""

TASK = {
    "tags": ["fusion", "conv", "activation", "conv2d", "relu"],
    "dtype": "float32",
    "presets": {
        "small": {"BATCH": 2, "IN_CHANNELS": 3, "OUT_CHANNELS": 8, "HEIGHT": 10, "WIDTH": 9, "KERNEL": 3},
        "full": {"BATCH": 32, "IN_CHANNELS": 64, "OUT_CHANNELS": 128, "HEIGHT": 128, "WIDTH": 128, "KERNEL": 3},
    },
}

import torch
import torch.nn as nn

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 128
WIDTH = 128
KERNEL = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, padding=kernel // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
